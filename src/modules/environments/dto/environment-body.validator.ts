import {
  registerDecorator,
  validateSync,
  ValidationArguments,
  ValidationError,
  ValidationOptions,
} from 'class-validator';
import { AppException } from '../../../common/errors/app-exception';
import { flattenErrors } from '../../../common/validation/validate';
import { freeFormIssues } from '../../../common/validation/free-form';
import { jsonSafetyIssues } from '../json-safety';
import { issuesToErrorMap, ValidationIssue, validateTopology } from '../topology';

/**
 * Deep checks of an environment create/patch body that the declarative validators cannot express
 * with nested paths: the free-form `topology` (validateTopology: node without host_type, count < 1,
 * non-object parts… reported as `topology.system_under_test.0.nodes.1.host_type`) and, for every
 * field, values PostgreSQL could not store or the snapshot hash could not cover (NUL characters,
 * unpaired surrogates, numbers that overflowed, absurd nesting) and, in `meta`, `extra` and the
 * topology, keys outside the free-form key rule (`src/common/validation/free-form.ts`).
 *
 * It runs inside the DTO validation (so before the 404/403 checks, in the CONTRACT §3 order). When
 * it finds a problem it validates the rest of the body once more with the deep checks switched
 * off and throws ONE 422 `validation_error` holding every field error, declarative and deep.
 */
const DEEP_FIELDS = [
  'name',
  'kind',
  'status',
  'description',
  'tags',
  'use_cases',
  'topology',
  'meta',
  'extra',
] as const;

/** Same options as the request validation (src/common/validation/validate.ts validateInput). */
const VALIDATION_OPTIONS = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: false,
  validationError: { target: false, value: false },
} as const;

/** Set while the rest of a body is re-validated, so the deep check does not recurse. */
let revalidating = false;
/** Deep issues per body instance, computed once however many fields carry the decorator. */
const checked = new WeakMap<object, ValidationIssue[]>();

/** Deep issues of a body (exported for unit tests). */
export function deepBodyIssues(body: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const topology = body.topology;
  if (topology !== undefined && topology !== null) issues.push(...validateTopology(topology));
  for (const field of ['meta', 'extra'] as const) {
    const value = body[field];
    if (value !== undefined && value !== null) issues.push(...freeFormIssues(value, field));
  }
  for (const field of DEEP_FIELDS) {
    const value = body[field];
    if (value !== undefined && value !== null) issues.push(...jsonSafetyIssues(value, field));
  }
  return issues;
}

/** Property decorator: put it on every body field listed in DEEP_FIELDS. */
export function EnvironmentBodyChecks(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'environmentBodyChecks',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate(_value: unknown, args: ValidationArguments): boolean {
          if (revalidating) return true;
          const body = args.object as Record<string, unknown>;
          let issues = checked.get(body);
          if (!issues) {
            issues = deepBodyIssues(body);
            checked.set(body, issues);
          }
          if (issues.length === 0) return true;
          let others: ValidationError[];
          revalidating = true;
          try {
            others = validateSync(body, VALIDATION_OPTIONS);
          } finally {
            revalidating = false;
          }
          const errors = flattenErrors(others);
          for (const [path, messages] of Object.entries(issuesToErrorMap(issues))) {
            (errors[path] ??= []).push(...messages);
          }
          throw AppException.validation(errors);
        },
      },
    });
  };
}
