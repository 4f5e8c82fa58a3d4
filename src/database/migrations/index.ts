import { Foundation1763700000000 } from './1763700000000-Foundation';

/**
 * Every migration, in order. Features append their class here (one line each); timestamps are
 * allocated per feature so files never collide.
 */
export const MIGRATIONS = [Foundation1763700000000];
