/**
 * Run metadata given as multipart form fields of a JUnit import (issue #24 item 5): `build`,
 * `ci_provider`, `branch`, `commit_sha`, `job_url`, `pipeline_id` (each at most once) and
 * `attribute` (`key:value`, repeatable). Pure: the fields as multer collected them in, the values
 * or the field errors out. The bounds are the run's (`test-runs/run-metadata.ts`).
 */
import type { FieldErrors } from '../../common/errors/app-exception';
import {
  ATTRIBUTE_KEY_MAX_LENGTH,
  ATTRIBUTE_KEY_RULE,
  ATTRIBUTE_VALUE_MAX_LENGTH,
  CI_BRANCH_MAX_LENGTH,
  CI_JOB_URL_MAX_LENGTH,
  CI_PIPELINE_ID_MAX_LENGTH,
  CI_PROVIDER_MAX_LENGTH,
  ciFieldProblem,
  CiField,
  COMMIT_SHA_MAX_LENGTH,
  COMMIT_SHA_MIN_LENGTH,
  MAX_RUN_ATTRIBUTES,
  parseAttributePair,
  RunAttributes,
  RunCi,
} from '../test-runs/run-metadata';

/** Longest `build` (the run column). */
export const BUILD_FORM_MAX_LENGTH = 255;
/** The form field of each `ci` field. */
export const CI_FORM_FIELDS: Record<string, CiField> = {
  ci_provider: 'provider',
  branch: 'branch',
  commit_sha: 'commit_sha',
  job_url: 'job_url',
  pipeline_id: 'pipeline_id',
};
/** The repeatable `key:value` attribute field. */
export const ATTRIBUTE_FORM_FIELD = 'attribute';
/** Every run metadata form field. */
export const RUN_METADATA_FORM_FIELDS: readonly string[] = [
  'build',
  ...Object.keys(CI_FORM_FIELDS),
  ATTRIBUTE_FORM_FIELD,
];
/** Most form values these fields may bring (each single field once, `attribute` 50 times). */
export const RUN_METADATA_FORM_VALUES_MAX =
  RUN_METADATA_FORM_FIELDS.length - 1 + MAX_RUN_ATTRIBUTES;

/** The run metadata of an import; absent keys were not given. */
export interface RunMetadataForm {
  build?: string;
  ci?: Partial<RunCi>;
  attributes?: RunAttributes;
}

export function isRunMetadataFormField(name: string): boolean {
  return RUN_METADATA_FORM_FIELDS.includes(name);
}

/**
 * The run metadata among `fields` (other fields are ignored here). Blank values count as not given.
 * Errors: a single field given twice, a value out of its bounds, an attribute that is not
 * `key:value` or repeats a key, more than {@link MAX_RUN_ATTRIBUTES} attributes.
 */
export function parseRunMetadataForm(fields: Readonly<Record<string, unknown>>): {
  metadata: RunMetadataForm;
  errors: FieldErrors;
} {
  const errors: FieldErrors = {};
  const metadata: RunMetadataForm = {};
  const single = (name: string): string | undefined => {
    const raw = fields[name];
    if (raw === undefined) return undefined;
    if (typeof raw !== 'string') {
      errors[name] = [`${name} must be given at most once`];
      return undefined;
    }
    const value = raw.trim();
    return value === '' ? undefined : value;
  };

  const build = single('build');
  if (build !== undefined) {
    if ([...build].length > BUILD_FORM_MAX_LENGTH) {
      errors.build = [`build must be at most ${BUILD_FORM_MAX_LENGTH} characters long`];
    } else if (build.includes('\u0000')) {
      errors.build = ['build must not contain NUL characters'];
    } else {
      metadata.build = build;
    }
  }

  const ci: Partial<RunCi> = {};
  for (const [name, field] of Object.entries(CI_FORM_FIELDS)) {
    const value = single(name);
    if (value === undefined) continue;
    const problem = ciFieldProblem(field, value);
    if (problem !== null) errors[name] = [problem.replace(field, name)];
    else ci[field] = field === 'commit_sha' ? value.toLowerCase() : value;
  }
  if (Object.keys(ci).length > 0) metadata.ci = ci;

  const raw = fields[ATTRIBUTE_FORM_FIELD];
  if (raw !== undefined) {
    const list = Array.isArray(raw) ? (raw as unknown[]) : [raw];
    const problems: string[] = [];
    const attributes: RunAttributes = {};
    if (list.length > MAX_RUN_ATTRIBUTES) {
      problems.push(`at most ${MAX_RUN_ATTRIBUTES} attributes are allowed (${list.length} given)`);
    } else {
      for (const item of list) {
        if (typeof item !== 'string') {
          problems.push('each attribute must be key:value');
          continue;
        }
        const pair = parseAttributePair(item);
        if ('problem' in pair) problems.push(pair.problem);
        else if (Object.prototype.hasOwnProperty.call(attributes, pair.key)) {
          problems.push(`attribute "${pair.key}" is given more than once`);
        } else attributes[pair.key] = pair.value;
      }
    }
    if (problems.length > 0) errors[ATTRIBUTE_FORM_FIELD] = problems.slice(0, 20);
    else if (Object.keys(attributes).length > 0) metadata.attributes = attributes;
  }
  return { metadata, errors };
}

/** True when nothing was given. */
export function isEmptyRunMetadata(m: RunMetadataForm | undefined): boolean {
  return (
    m === undefined || (m.build === undefined && m.ci === undefined && m.attributes === undefined)
  );
}

/** The OpenAPI schema of the run metadata form fields (merged into the upload's). */
export const RUN_METADATA_FORM_SCHEMA = {
  build: {
    type: 'string',
    maxLength: BUILD_FORM_MAX_LENGTH,
    example: 'main #871 (9fceb02d0ae5)',
    description:
      'Run metadata (issue #24; every metadata field at most once, blank = not given): the ' +
      '`build` of the run. On `POST /projects/{id}/imports/junit` these fields describe the run the ' +
      'import creates (a run found by name keeps its own); on `POST /test-runs/{id}/imports/junit` ' +
      'they update the run: `build` and each given `ci` field replace its value, each attribute is ' +
      'set (other attributes kept; more than 50 in all → 422 on `attribute`). A dry run writes none.',
  },
  ci_provider: {
    type: 'string',
    maxLength: CI_PROVIDER_MAX_LENGTH,
    example: 'github-actions',
    description: '`ci.provider` of the run (free text)',
  },
  branch: {
    type: 'string',
    maxLength: CI_BRANCH_MAX_LENGTH,
    example: 'main',
    description: '`ci.branch` of the run',
  },
  commit_sha: {
    type: 'string',
    minLength: COMMIT_SHA_MIN_LENGTH,
    maxLength: COMMIT_SHA_MAX_LENGTH,
    pattern: '^[0-9a-fA-F]{7,64}$',
    example: '9fceb02d0ae598e95dc970b74767f19372d61af8',
    description: '`ci.commit_sha`: 7 to 64 hexadecimal digits (stored lowercase)',
  },
  job_url: {
    type: 'string',
    format: 'uri',
    maxLength: CI_JOB_URL_MAX_LENGTH,
    example: 'https://github.com/acme/shop/actions/runs/9876543210',
    description: '`ci.job_url`: an absolute http:// or https:// URL',
  },
  pipeline_id: {
    type: 'string',
    maxLength: CI_PIPELINE_ID_MAX_LENGTH,
    example: '9876543210',
    description: '`ci.pipeline_id`',
  },
  attribute: {
    type: 'array',
    maxItems: MAX_RUN_ATTRIBUTES,
    items: {
      type: 'string',
      maxLength: ATTRIBUTE_KEY_MAX_LENGTH + 1 + ATTRIBUTE_VALUE_MAX_LENGTH,
    },
    example: ['team:payments', 'os:linux'],
    description:
      `Repeatable \`key:value\` (split at the first \`:\`): an attribute of the run. Keys ` +
      `${ATTRIBUTE_KEY_RULE}; values at most ${ATTRIBUTE_VALUE_MAX_LENGTH} characters; a key at ` +
      `most once; at most ${MAX_RUN_ATTRIBUTES}.`,
  },
} as const;
