import { jobFailure } from './job-queue.service';
import { isWellFormedText } from '../validation/well-formed';

describe('jobFailure (what pg-boss stores of a failed job)', () => {
  it('keeps the message only, as well-formed text', () => {
    const driverError = Object.assign(new Error('invalid input syntax for type json: "\ud83d"'), {
      parameters: ['\ud83d'],
      detail: 'Unicode low surrogate must follow a high surrogate.',
    });
    const failure = jobFailure(driverError);
    expect(Object.keys(failure)).toEqual([]);
    expect(isWellFormedText(failure.message)).toBe(true);
    expect(failure.message).toBe('invalid input syntax for type json: "\ufffd"');
  });

  it('takes a thrown non-error as its text', () => {
    expect(jobFailure('boom').message).toBe('boom');
  });
});
