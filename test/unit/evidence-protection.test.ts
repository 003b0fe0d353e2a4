import type { Response } from 'express';
import { callerOf, type Caller } from '../../src/auth/caller';
import { DomainError } from '../../src/errors';
import { evidenceRemover } from '../../src/evidence/evidence-protection';

const withLocals = (locals: Response['locals']) => ({ locals }) as Response;
const apiKey = { keyId: 'k', accountId: 'usr_1', scopes: ['*'] };
const session = { userId: 'usr_1', sessionId: 'ses_1' };
const forbidden = expect.objectContaining({ kind: 'forbidden' }) as DomainError;

describe('evidenceRemover', () => {
  it('when a console session asks, then removing evidence is allowed, under its user id', () => {
    expect(evidenceRemover({ type: 'session', userId: 'usr_1' })).toEqual({
      type: 'session',
      userId: 'usr_1',
    });
  });

  it('when an API key asks, whatever its scopes, then it is forbidden', () => {
    const caller: Caller = { type: 'api_key', ...apiKey };
    expect(() => evidenceRemover(caller)).toThrow(forbidden);
  });
});

describe('callerOf', () => {
  it('when a request carries an API key, then the caller is the key with its account and scopes', () => {
    expect(callerOf(withLocals({ apiKey }))).toEqual({ type: 'api_key', ...apiKey });
  });

  it('when a request carries a session, then the caller is the session user', () => {
    expect(callerOf(withLocals({ session }))).toEqual({ type: 'session', userId: 'usr_1' });
  });

  it('when both an API key and a session are present, then the key is the caller and still cannot remove evidence', () => {
    expect(() => evidenceRemover(callerOf(withLocals({ apiKey, session })))).toThrow(forbidden);
  });

  it('when no authentication ran, then it is a programming error, not a refusal', () => {
    expect(() => callerOf(withLocals({}))).toThrow(/authentication middleware must run/);
    expect(() => callerOf(withLocals({}))).not.toThrow(DomainError);
  });
});
