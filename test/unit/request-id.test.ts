import { isSaneRequestId } from '../../src/http/request-id';

describe('isSaneRequestId', () => {
  it.each(['abc', 'a1-b2_c3.d4:e5', '0f8e2a8c-5c1e-4f3b-9a53-5c8d4f0b7d21', 'x'.repeat(128)])(
    'when the id is %s, then it is echoed',
    (id) => expect(isSaneRequestId(id)).toBe(true),
  );

  it.each(['', ' a', 'a b', 'x'.repeat(129), '-leading', 'new\nline', '<x>', 'é'])(
    'when the id is %j, then it is replaced',
    (id) => expect(isSaneRequestId(id)).toBe(false),
  );

  it('when the header is repeated (an array), then it is replaced', () => {
    expect(isSaneRequestId(['a', 'b'])).toBe(false);
  });
});
