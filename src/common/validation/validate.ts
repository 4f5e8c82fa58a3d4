import { isDeepStrictEqual } from 'node:util';
import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { ClassConstructor, plainToInstance } from 'class-transformer';
import { validateSync, ValidationError, ValidatorOptions } from 'class-validator';
import { AppException, FieldErrors } from '../errors/app-exception';
import { currentStore } from '../persistence/request-context';
import { ListCheck, notAnObjectMessage, withListCheck } from './nested-list';
import { isWellFormedText, NOT_WELL_FORMED, toWellFormedText } from './well-formed';

const NO_TRIM = Symbol('no-trim');

/** Marks a string property that must not be trimmed (passwords, secrets). */
export function NoTrim(): PropertyDecorator {
  return (target, key) => {
    const set: Set<string | symbol> = Reflect.getMetadata(NO_TRIM, target) ?? new Set();
    set.add(key);
    Reflect.defineMetadata(NO_TRIM, set, target);
  };
}

const KEPT_AS_PARSED = Symbol('kept-as-parsed');

/**
 * Marks a top-level body field whose JSON object is free-form data (an environment's topology,
 * `meta`, `extra`): when it is a plain object whose text is all well-formed, it skips
 * class-transformer's copy (which for a 60 KB topology cost about 4 ms and as much garbage) and
 * reaches the validators as parsed. Its validation is unchanged; such an object holds no DTO, so the
 * copy, the reserved-key shielding and the trimming (none of which touch a plain object's
 * contents) change nothing in it.
 */
export function KeptAsParsed(): PropertyDecorator {
  return (target, key) => {
    const inherited: ReadonlySet<string | symbol> | undefined = Reflect.getMetadata(
      KEPT_AS_PARSED,
      target,
    );
    Reflect.defineMetadata(KEPT_AS_PARSED, new Set([...(inherited ?? []), key]), target);
  };
}

/**
 * The fields of `plain` that {@link KeptAsParsed} lets skip the transformation: plain objects whose
 * keys and strings are all well-formed UTF-16 (ill-formed text takes the full path, which reports
 * it and hands validators its well-formed form). Null when there are none.
 */
function keptAsParsed(cls: ClassConstructor<object>, plain: object): Map<string, object> | null {
  const fields: ReadonlySet<string | symbol> | undefined = Reflect.getMetadata(
    KEPT_AS_PARSED,
    cls.prototype as object,
  );
  if (fields === undefined) return null;
  let kept: Map<string, object> | null = null;
  for (const field of fields) {
    if (typeof field !== 'string' || !Object.prototype.hasOwnProperty.call(plain, field)) continue;
    const value: unknown = (plain as Record<string, unknown>)[field];
    if (value === null || typeof value !== 'object') continue;
    if (Object.getPrototypeOf(value) !== Object.prototype || !isAllWellFormed(value)) continue;
    (kept ??= new Map()).set(field, value);
  }
  return kept;
}

/** True when every key and string inside `value` is well-formed UTF-16 (one walk, no copy). */
function isAllWellFormed(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (!isWellFormedText(v)) return false;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === 'object') {
      for (const key of Object.keys(v)) {
        if (!isWellFormedText(key)) return false;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return true;
}

const PRIMITIVES = new Set<unknown>([String, Number, Boolean, Object, Array]);

/** True when `t` is a DTO class worth validating (not a primitive wrapper). */
export function isDtoClass(t: unknown): t is ClassConstructor<object> {
  return typeof t === 'function' && !PRIMITIVES.has(t);
}

/**
 * Trims every declared string field of DTO instances (recursively through nested DTOs), leaving
 * free-form objects (meta, extra, metadata…) untouched: they are plain objects, not DTO instances.
 */
function trimDeclaredStrings(obj: unknown): void {
  if (Array.isArray(obj)) {
    obj.forEach(trimDeclaredStrings);
    return;
  }
  if (obj === null || typeof obj !== 'object' || Object.getPrototypeOf(obj) === Object.prototype)
    return;
  const noTrim: Set<string | symbol> | undefined = Reflect.getMetadata(NO_TRIM, obj);
  const rec = obj as Record<string, unknown>;
  for (const key of Object.keys(rec)) {
    const v = rec[key];
    if (typeof v === 'string') {
      if (!noTrim?.has(key)) rec[key] = v.trim();
    } else if (Array.isArray(v)) {
      if (v.every((x) => typeof x === 'string')) {
        if (!noTrim?.has(key)) rec[key] = v.map((x: string) => x.trim());
      } else v.forEach(trimDeclaredStrings);
    } else if (v && typeof v === 'object') {
      trimDeclaredStrings(v);
    }
  }
}

/** Bounds of a number, meaningless for a value that is not a number at all. */
const NUMERIC_BOUNDS: ReadonlySet<string> = new Set(['min', 'max']);
/** The type checks that already tell a non-number it is wrong. */
const NUMERIC_TYPES = ['isInt', 'isNumber'];

/**
 * The messages of one field. A value that is not a number (`page_size=1.5` or `=abc` stays a
 * string) is answered by its type check alone: `@Min`/`@Max` fail on every non-number, so "must
 * not be greater than 200" for `1.5` would be false. A number out of range keeps its bound's message.
 */
function messageFor(err: ValidationError): string[] {
  const c = err.constraints ?? {};
  const typeFailed = typeof err.value !== 'number' && NUMERIC_TYPES.some((t) => t in c);
  return Object.entries(c)
    .filter(([name]) => !(typeFailed && NUMERIC_BOUNDS.has(name)))
    .map(([name, msg]) => (name === 'whitelistValidation' ? 'Unknown field' : msg));
}

/** Flattens class-validator errors into the problem `errors` map with dot paths. */
export function flattenErrors(errors: ValidationError[], prefix = ''): FieldErrors {
  const out: FieldErrors = {};
  const walk = (list: ValidationError[], base: string) => {
    for (const e of list) {
      const path = base ? `${base}.${e.property}` : e.property;
      const msgs = messageFor(e);
      if (msgs.length) addMessages(out, path, msgs);
      if (e.children?.length) walk(e.children, path);
    }
  };
  walk(errors, prefix);
  return out;
}

/** Appends to `out[path]`, also for paths such as `toString` that an object literal inherits. */
function addMessages(out: FieldErrors, path: string, msgs: string[]): void {
  if (!Object.prototype.hasOwnProperty.call(out, path)) {
    Object.defineProperty(out, path, {
      value: [],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  out[path].push(...msgs);
}

/**
 * class-transformer skips own keys named `constructor`/`__proto__`, chokes on a `constructor` key
 * (it takes it for the object's class) and drops keys shadowing Object.prototype members
 * (`hasOwnProperty`, `toString`…). Free-form objects (meta, topology…) may legitimately hold such
 * keys, so they are renamed around the transformation and put back as plain own properties.
 */
const RESERVED_KEYS = new Set(['prototype', ...Object.getOwnPropertyNames(Object.prototype)]);
const SENTINEL = '\u0000tms-reserved:';

/** `tags.1` → `tags[1]`, `meta.a` → `a`: the field name a message starts with. */
function labelOf(path: string): string {
  const segments = path.split('.');
  const last = segments[segments.length - 1];
  return /^\d+$/.test(last) && segments.length > 1
    ? `${segments[segments.length - 2]}[${last}]`
    : last;
}

/**
 * Copies a plain request part for class-transformer: reserved keys are shielded (see above), and
 * every string, keys included, that is not well-formed UTF-16 is reported in `illFormed` under its
 * path and replaced by its well-formed form, so that no validator ever sees a lone surrogate (the
 * request fails with a 422 anyway). Recursion is bounded: bodies nest at most 64 levels (the body
 * middleware refuses deeper ones) and query strings a handful.
 */
function shieldReservedKeys(value: unknown, path: string, illFormed: FieldErrors): unknown {
  const at = (key: string | number) => (path ? `${path}.${key}` : String(key));
  if (typeof value === 'string') {
    if (isWellFormedText(value)) return value;
    addMessages(illFormed, path || 'body', [`${labelOf(path || 'body')} ${NOT_WELL_FORMED}`]);
    return toWellFormedText(value);
  }
  if (Array.isArray(value)) return value.map((v, i) => shieldReservedKeys(v, at(i), illFormed));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const raw of Object.keys(value)) {
    let key = raw;
    if (!isWellFormedText(raw)) {
      key = toWellFormedText(raw);
      addMessages(illFormed, path || 'body', [
        `${labelOf(path || 'body')} keys ${NOT_WELL_FORMED}`,
      ]);
    }
    const v = shieldReservedKeys((value as Record<string, unknown>)[raw], at(key), illFormed);
    out[RESERVED_KEYS.has(key) ? SENTINEL + key : key] = v;
  }
  return out;
}

/**
 * Puts the shielded keys back as plain own properties of free-form objects. On DTO instances they
 * are unknown fields (class-validator's whitelist would not see them, and an own `constructor`
 * would hide the DTO's class): they are removed and reported in `unknown` under their path.
 */
function restoreReservedKeys(
  value: unknown,
  path: string,
  unknown: FieldErrors,
  seen = new Set<object>(),
): void {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  const at = (key: string | number) => (path ? `${path}.${key}` : String(key));
  if (Array.isArray(value)) {
    value.forEach((v, i) => restoreReservedKeys(v, at(i), unknown, seen));
    return;
  }
  const isDto = Object.getPrototypeOf(value) !== Object.prototype;
  const rec = value as Record<string, unknown>;
  for (const key of Object.keys(rec)) {
    const v = rec[key];
    if (!key.startsWith(SENTINEL)) {
      restoreReservedKeys(v, at(key), unknown, seen);
      continue;
    }
    const name = key.slice(SENTINEL.length);
    delete rec[key];
    if (isDto) {
      addMessages(unknown, at(name), ['Unknown field']);
    } else {
      restoreReservedKeys(v, at(name), unknown, seen);
      Object.defineProperty(rec, name, {
        value: v,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
}

/**
 * Turns a plain request part into a validated, trimmed DTO instance, or throws 422 validation_error.
 * `kind` 'query' prefixes paths with `query.`.
 */
export function validateInput<T extends object>(
  cls: ClassConstructor<T>,
  plain: unknown,
  kind: 'body' | 'query',
): T {
  // No body at all validates like an empty object: required fields are then reported by name.
  if (kind === 'body' && (plain === undefined || plain === null)) plain = {};
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    throw AppException.validation({ body: ['The request body must be a JSON object'] });
  }
  if (kind === 'query' && isEmptyQuery(plain)) {
    const instance = emptyQueryInstance(cls);
    if (instance !== null) return instance;
  }
  return validateParsed(cls, plain, kind);
}

/** True for a query string without parameters (`{}` as Express parses it). */
function isEmptyQuery(plain: object): boolean {
  for (const _ in plain) return false;
  return true;
}

/**
 * Per query DTO class: whether a query without parameters validates and yields exactly what
 * `new cls()` builds (its declared defaults, nothing transformed or trimmed). Decided once per class
 * by the full path below; such a class is then answered `new cls()` for an empty query, without
 * class-transformer and class-validator (about 0.05 ms of a `GET /test-runs/{id}`). A class whose
 * empty query is refused (a required parameter) or comes out otherwise always takes the full path.
 */
const emptyQueryIsPlainInstance = new WeakMap<ClassConstructor<object>, boolean>();

function emptyQueryInstance<T extends object>(cls: ClassConstructor<T>): T | null {
  let plainInstance = emptyQueryIsPlainInstance.get(cls);
  if (plainInstance === undefined) {
    try {
      plainInstance = isDeepStrictEqual(validateParsed(cls, {}, 'query'), new cls());
    } catch {
      plainInstance = false;
    }
    emptyQueryIsPlainInstance.set(cls, plainInstance);
  }
  return plainInstance ? new cls() : null;
}

/** {@link validateInput} for a JSON object: transformed, shielded, trimmed and validated. */
function validateParsed<T extends object>(
  cls: ClassConstructor<T>,
  plain: object,
  kind: 'body' | 'query',
): T {
  const prefix = kind === 'query' ? 'query' : '';
  const illFormed: FieldErrors = {};
  if (kind === 'query') plain = withoutNulInQuery(plain, illFormed);
  const kept = kind === 'body' ? keptAsParsed(cls, plain) : null;
  if (kept !== null) {
    const rest: Record<string, unknown> = { ...plain };
    for (const field of kept.keys()) delete rest[field];
    plain = rest;
  }
  const instance = plainToInstance(cls, shieldReservedKeys(plain, prefix, illFormed), {
    exposeDefaultValues: true,
  });
  const reserved: FieldErrors = {};
  restoreReservedKeys(instance, prefix, reserved);
  trimDeclaredStrings(instance);
  if (kept !== null) {
    for (const [field, value] of kept) {
      Object.defineProperty(instance, field, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  const options: ValidatorOptions = {
    whitelist: true,
    // Unknown body fields are a 422 (CONTRACT §2); unknown query parameters are ignored, as HTTP
    // clients and proxies add their own (cache busters, tracing) and the contract names bodies only.
    forbidNonWhitelisted: kind === 'body',
    forbidUnknownValues: false,
    // The failing value is kept on the error only to tell a non-number from a number out of range
    // (`messageFor`); no message quotes it.
    validationError: { target: false, value: true },
  };
  let errors: ValidationError[];
  let lists: ListCheck;
  try {
    ({ result: errors, check: lists } = withListCheck(options, () =>
      validateSync(instance, options),
    ));
  } catch (e) {
    // A validator that reports a whole body itself (environments) throws its 422: add ours to it.
    if (e instanceof AppException && e.code === 'validation_error' && e.errors) {
      for (const [path, msgs] of Object.entries(illFormed)) addMessages(e.errors, path, msgs);
    }
    throw e;
  }
  const fieldErrors = flattenErrors(errors, prefix);
  const stopped = addListFindings(fieldErrors, lists, instance, prefix);
  for (const [path, msgs] of Object.entries(reserved)) addMessages(fieldErrors, path, msgs);
  for (const [path, msgs] of Object.entries(illFormed)) addMessages(fieldErrors, path, msgs);
  if (errors.length > 0 || Object.keys(fieldErrors).length > 0)
    throw validationProblem(fieldErrors, stopped);
  return instance;
}

/**
 * A query string's values with their NUL characters reported (`query.<name>`) and removed, so that
 * no filter sends one to PostgreSQL (which refuses it in text: the 422 then named `body`, after the
 * 404 checks) and no `@NoNul` reports it twice. Every query parameter is checked, whether its DTO
 * field carries `@NoNul` or not.
 */
function withoutNulInQuery(query: object, errors: FieldErrors): object {
  let out: Record<string, unknown> | null = null;
  for (const [key, value] of Object.entries(query)) {
    const hasNul = (v: unknown) => typeof v === 'string' && v.includes('\u0000');
    if (!(hasNul(value) || (Array.isArray(value) && value.some(hasNul)))) continue;
    addMessages(errors, `query.${key}`, [`${key} must not contain NUL characters`]);
    const strip = (v: unknown) => (typeof v === 'string' ? v.replaceAll('\u0000', '') : v);
    out ??= { ...query };
    out[key] = Array.isArray(value) ? value.map(strip) : strip(value);
  }
  return out ?? query;
}

/**
 * Adds the invalid items the {@link NestedList}s found to `out`, under their paths (`steps.3.action`,
 * `steps.4` for an item that is not an object), and the errors of invalid {@link NestedObject}s
 * (`generation_config.product_ids`). Returns, for each list whose objects were validated
 * only in part, the last one validated (`steps[99]`).
 */
function addListFindings(
  out: FieldErrors,
  lists: ListCheck,
  root: object,
  prefix: string,
): string[] {
  const paths = new Map<object, string>();
  const pathOf = (owner: object): string => {
    let path = paths.get(owner);
    if (path === undefined) {
      path = owner === root ? prefix : (findPath(root, owner, prefix) ?? prefix);
      paths.set(owner, path);
    }
    return path;
  };
  const join = (base: string, key: string | number) => (base ? `${base}.${key}` : String(key));
  for (const f of lists.findings) {
    const field = join(pathOf(f.owner), f.property);
    const at = f.index === null ? field : join(field, f.index);
    if (f.errors === null) addMessages(out, at, [notAnObjectMessage(f.property)]);
    else
      for (const [path, msgs] of Object.entries(flattenErrors(f.errors, at)))
        addMessages(out, path, msgs);
  }
  return lists.stopped.map((s) => labelOf(join(join(pathOf(s.owner), s.property), s.index)));
}

/** The path of `target` inside `root` (a validated DTO instance: bounded, acyclic), or null. */
function findPath(root: unknown, target: object, path: string): string | null {
  if (root === null || typeof root !== 'object') return null;
  for (const [key, value] of Object.entries(root)) {
    const at = path ? `${path}.${key}` : key;
    if (value === target) return at;
    const found = findPath(value, target, at);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Most fields a 422 lists: a body with 10,000 junk elements in a list of objects would otherwise be
 * answered with an error per element (megabytes for a request of kilobytes).
 */
export const MAX_ERROR_FIELDS = 100;

/**
 * 422 validation_error listing at most {@link MAX_ERROR_FIELDS} fields, saying how many there were;
 * and, when a list's objects were validated only up to an invalid one (`stopped`: that item of each
 * such list), that the objects after it were not checked.
 */
export function validationProblem(fieldErrors: FieldErrors, stopped: string[] = []): AppException {
  const paths = Object.keys(fieldErrors);
  if (paths.length <= MAX_ERROR_FIELDS && stopped.length === 0)
    return AppException.validation(fieldErrors);
  const first: FieldErrors = {};
  for (const path of paths.slice(0, MAX_ERROR_FIELDS)) addMessages(first, path, fieldErrors[path]);
  const notChecked =
    stopped.length === 0 ? '' : `; the objects after ${stopped.join(', ')} were not checked`;
  return AppException.validation(
    first,
    `Request contains invalid fields (the first ${Object.keys(first).length} of ${paths.length} ` +
      `are listed${notChecked})`,
  );
}

/**
 * Global pipe: returns the DTO the access guard already validated for this request (so validation
 * runs once and before the 404/403 checks, per the CONTRACT §3 check order), or validates now.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (
      (metadata.type !== 'body' && metadata.type !== 'query') ||
      metadata.data ||
      !isDtoClass(metadata.metatype)
    ) {
      return value;
    }
    const cached = currentStore()?.validated.get(metadata.type);
    if (cached instanceof metadata.metatype) return cached;
    return validateInput(metadata.metatype, value, metadata.type);
  }
}
