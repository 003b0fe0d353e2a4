import type { Response } from 'express';
import { assertMayRemoveEvidence } from '../../src/evidence/evidence-protection';

const withLocals = (locals: Response['locals']) => ({ locals }) as Response;
const apiKey = { keyId: 'k', accountId: 'usr_1', scopes: ['*'] };
const session = { userId: 'usr_1', sessionId: 'ses_1' };

describe('assertMayRemoveEvidence', () => {
  it('when a console session asks, then removing evidence is allowed', () => {
    expect(() => assertMayRemoveEvidence(withLocals({ session }))).not.toThrow();
  });

  it('when an API key asks, whatever its scopes, then 403', () => {
    expect(() => assertMayRemoveEvidence(withLocals({ apiKey }))).toThrow(
      expect.objectContaining({ status: 403 }),
    );
  });

  it('when both an API key and a session are present, then the key still cannot', () => {
    expect(() => assertMayRemoveEvidence(withLocals({ apiKey, session }))).toThrow(
      expect.objectContaining({ status: 403 }),
    );
  });

  it('when nobody is signed in, then 403', () => {
    expect(() => assertMayRemoveEvidence(withLocals({}))).toThrow(
      expect.objectContaining({ status: 403 }),
    );
  });
});
