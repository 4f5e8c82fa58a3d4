/**
 * Run metadata given as multipart form fields of a JUnit import (issue #24 item 5): `build`,
 * `ci_provider`, `branch`, `commit_sha`, `job_url`, `pipeline_id` (each at most once) and
 * `attribute` (`key:value`, repeatable). Pure: the fields as multer collected them in, the values
 * or the field errors out. The bounds are the run's (`test-runs/run-metadata.ts`).
 */
import type { FieldErrors } from '../../common/errors/app-exception';
import {
  ciFieldProblem,
  CiField,
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
