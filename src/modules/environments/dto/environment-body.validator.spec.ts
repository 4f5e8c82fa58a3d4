import 'reflect-metadata';
import { AppException } from '../../../common/errors/app-exception';
import { validateInput } from '../../../common/validation/validate';
import { CreateEnvironmentDto, UpdateEnvironmentDto } from './environment.dto';

const PROJECT = '0190f3b2-7c1d-7abc-8def-0123456789ab';

function errorsOf(fn: () => unknown): Record<string, string[]> {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppException && error.code === 'validation_error') {
      return error.errors ?? {};
    }
    throw error;
  }
  throw new Error('expected a validation_error');
}

describe('environment body validation', () => {
  it('accepts a valid create body with a free-form topology and keeps it untouched', () => {
    const topology = {
      system_under_test: [{ name: ' api ', nodes: [{ host_type: 'vm', rack: { u: 4 } }] }],
      custom: [1],
    };
    const dto = validateInput(
      CreateEnvironmentDto,
      { project_id: PROJECT, name: ' Env ', topology, meta: { a: ' b ' } },
      'body',
    );
    expect(dto.name).toBe('Env');
    expect(dto.topology).toEqual(topology);
    expect(dto.meta).toEqual({ a: ' b ' });
  });

  it('reports topology issues with nested dot paths together with the other field errors', () => {
    const errors = errorsOf(() =>
      validateInput(
        CreateEnvironmentDto,
        {
          project_id: PROJECT,
          name: '  ',
          schema_version: 1,
          topology: {
            system_under_test: [{ name: 'api', nodes: [{ host_type: 'vm' }, { count: 0 }] }],
            load_generators: {},
          },
        },
        'body',
      ),
    );
    expect(errors).toEqual({
      name: ['name should not be empty'],
      schema_version: ['Unknown field'],
      'topology.load_generators': ['load_generators must be an array'],
      'topology.system_under_test.0.nodes.1.host_type': ['host_type is required'],
      'topology.system_under_test.0.nodes.1.count': ['count must not be less than 1'],
    });
  });

  it('reports unstorable values anywhere in the body', () => {
    const errors = errorsOf(() =>
      validateInput(
        UpdateEnvironmentDto,
        { name: 'a\u0000', meta: { deep: { n: Infinity } }, tags: ['ok', '\ud800'] },
        'body',
      ),
    );
    expect(errors).toEqual({
      name: ['name must not contain NUL characters'],
      'meta.deep.n': ['n is out of range'],
      'tags.1': ['tags[1] must not contain unpaired UTF-16 surrogates'],
    });
  });

  it.each<[string, Record<string, unknown>, Record<string, string[]>]>([
    ['null topology', { topology: null }, { topology: ['topology must not be null'] }],
    ['array topology', { topology: [] }, { topology: ['topology must be an object'] }],
    ['project_id', { project_id: PROJECT }, { project_id: ['Unknown field'] }],
    ['schema_version', { schema_version: 1 }, { schema_version: ['Unknown field'] }],
  ])('PATCH rejects %s', (_name, body, expected) => {
    expect(errorsOf(() => validateInput(UpdateEnvironmentDto, body, 'body'))).toEqual(expected);
  });

  it('PATCH rejects an explicit null name', () => {
    const errors = errorsOf(() => validateInput(UpdateEnvironmentDto, { name: null }, 'body'));
    expect(Object.keys(errors)).toEqual(['name']);
    expect(errors.name).toContain('name must not be null');
  });

  it('accepts an empty PATCH and description null', () => {
    expect(validateInput(UpdateEnvironmentDto, {}, 'body')).toBeInstanceOf(UpdateEnvironmentDto);
    expect(validateInput(UpdateEnvironmentDto, { description: null }, 'body').description).toBe(
      null,
    );
  });
});
