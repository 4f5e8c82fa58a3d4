import { Foundation1763700000000 } from './1763700000000-Foundation';
import { Environments1763700000100 } from './1763700000100-Environments';
import { ProductsComponents1763700000150 } from './1763700000150-ProductsComponents';
import { TestCases1763700000200 } from './1763700000200-TestCases';
import { TestRuns1763700000400 } from './1763700000400-TestRuns';
import { TestPlans1763700000500 } from './1763700000500-TestPlans';
import { Imports1763700000600 } from './1763700000600-Imports';
import { RunCounts1763700000700 } from './1763700000700-RunCounts';
import { RunSnapshotJson1763700000800 } from './1763700000800-RunSnapshotJson';
import { InsightsIndexes1763700001170 } from './1763700001170-InsightsIndexes';
import { ComponentGraphVersions1763700002300 } from './1763700002300-ComponentGraphVersions';
import { IdempotencyKeys1763700018100 } from './1763700018100-IdempotencyKeys';
import { LoginAttempts1763700018200 } from './1763700018200-LoginAttempts';
import { JobQueue1763700019000 } from './1763700019000-JobQueue';
import { BackgroundImports1763700019100 } from './1763700019100-BackgroundImports';
import { RunMetadata1763700019300 } from './1763700019300-RunMetadata';
import { Webhooks1763700019200 } from './1763700019200-Webhooks';
import { CursorIndexes1763700019400 } from './1763700019400-CursorIndexes';
import { RunCountSlots1763700019500 } from './1763700019500-RunCountSlots';
import { DropRunItemsLastExecuted1763700019510 } from './1763700019510-DropRunItemsLastExecuted';
import { LeanImportWritesTwo1763700019600 } from './1763700019600-LeanImportWritesTwo';
import { ProjectResultVersions1763700019700 } from './1763700019700-ProjectResultVersions';
import { PreviousRunIndex1763700019710 } from './1763700019710-PreviousRunIndex';
import { LeanImportWritesThree1763700019900 } from './1763700019900-LeanImportWritesThree';
import { LowerTagsInPlpgsql1763700019910 } from './1763700019910-LowerTagsInPlpgsql';
import { ResultChangesFoldSkipsDeletedProjects1763700019920 } from './1763700019920-ResultChangesFoldSkipsDeletedProjects';
import { TestCaseTitleProbe1763700019930 } from './1763700019930-TestCaseTitleProbe';
import { LeanRunWrites1763700019940 } from './1763700019940-LeanRunWrites';
import { UserEmailsUnique1763700019950 } from './1763700019950-UserEmailsUnique';
import { WebhookAttemptsUnique1763700019960 } from './1763700019960-WebhookAttemptsUnique';
import { FasterTitleProbe1763700019970 } from './1763700019970-FasterTitleProbe';
import { PartialNullKeyIndexes1763700019980 } from './1763700019980-PartialNullKeyIndexes';
import { ImportAnswerText1763700019990 } from './1763700019990-ImportAnswerText';
import { RunListCoveringIndexes1763700020000 } from './1763700020000-RunListCoveringIndexes';
import { RunItemCaseCopiesOnDemand1763700019850 } from './1763700019850-RunItemCaseCopiesOnDemand';
import { RunItemIndexesLean1763700019860 } from './1763700019860-RunItemIndexesLean';
import { LeanImportWrites1763700002500 } from './1763700002500-LeanImportWrites';
import { RunSnapshotsOnce1763700002400 } from './1763700002400-RunSnapshotsOnce';

/**
 * Every migration, in order. Features append their class here (one line each); timestamps are
 * allocated per feature so files never collide.
 */
export const MIGRATIONS = [
  Foundation1763700000000,
  Environments1763700000100,
  ProductsComponents1763700000150,
  TestCases1763700000200,
  TestRuns1763700000400,
  TestPlans1763700000500,
  Imports1763700000600,
  RunCounts1763700000700,
  RunSnapshotJson1763700000800,
  InsightsIndexes1763700001170,
  ComponentGraphVersions1763700002300,
  RunSnapshotsOnce1763700002400,
  LeanImportWrites1763700002500,
  IdempotencyKeys1763700018100,
  LoginAttempts1763700018200,
  JobQueue1763700019000,
  BackgroundImports1763700019100,
  RunMetadata1763700019300,
  Webhooks1763700019200,
  CursorIndexes1763700019400,
  RunCountSlots1763700019500,
  DropRunItemsLastExecuted1763700019510,
  LeanImportWritesTwo1763700019600,
  ProjectResultVersions1763700019700,
  PreviousRunIndex1763700019710,
  LeanImportWritesThree1763700019900,
  LowerTagsInPlpgsql1763700019910,
  RunItemCaseCopiesOnDemand1763700019850,
  RunItemIndexesLean1763700019860,
  ResultChangesFoldSkipsDeletedProjects1763700019920,
  TestCaseTitleProbe1763700019930,
  LeanRunWrites1763700019940,
  UserEmailsUnique1763700019950,
  WebhookAttemptsUnique1763700019960,
  FasterTitleProbe1763700019970,
  PartialNullKeyIndexes1763700019980,
  ImportAnswerText1763700019990,
  RunListCoveringIndexes1763700020000,
];
