import { classify } from '../../src/alerts/http-delivery';

describe('delivery verdicts', () => {
  it.each([200, 201, 202, 204, 299])(
    'when the receiver answers %i, then it is delivered',
    (status) => {
      expect(classify({ kind: 'response', status })).toBe('delivered');
    },
  );
  it.each([300, 301, 302, 303, 307, 308, 400, 401, 403, 404, 410, 422, 100])(
    'when the receiver answers %i, then it fails without retry',
    (status) => expect(classify({ kind: 'response', status })).toBe('give-up'),
  );
  it.each([408, 409, 425, 429, 500, 502, 503, 504])(
    'when the receiver answers %i, then it is retried',
    (status) => {
      expect(classify({ kind: 'response', status })).toBe('retry');
    },
  );
  it('when the network fails or the attempt times out, then it is retried', () => {
    expect(classify({ kind: 'network-error', message: 'ECONNREFUSED' })).toBe('retry');
    expect(classify({ kind: 'timeout' })).toBe('retry');
  });
});
