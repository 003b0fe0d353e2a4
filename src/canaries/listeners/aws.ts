import { randomUUID } from 'node:crypto';
import type { Tripwires } from '../tripwires';
import type { HttpAnswer, HttpCaller } from './http-answer';

/** The key id in a Signature V4 header (`Credential=AKIA…/date/region/service/aws4_request`). */
const HEADER_CREDENTIAL =
  /^AWS4-HMAC-SHA256\s+Credential=([A-Z0-9]{16,128})\/[^/]*\/[^/]*\/([a-z0-9-]+)\//;
/** The same in a presigned URL's `X-Amz-Credential` query parameter. */
const QUERY_CREDENTIAL = /^([A-Z0-9]{16,128})\/[^/]*\/[^/]*\/([a-z0-9-]+)\//;

export interface AwsCall extends HttpCaller {
  authorization: string;
  /** `X-Amz-Credential` from the query string, for presigned URLs. */
  queryCredential: string;
  contentType: string;
}

/** The key id and service a call was signed for, or nulls when it is not signed. */
export function signedKeyId(call: Pick<AwsCall, 'authorization' | 'queryCredential'>): {
  keyId: string | null;
  service: string;
} {
  const match =
    HEADER_CREDENTIAL.exec(call.authorization) ?? QUERY_CREDENTIAL.exec(call.queryCredential);
  return { keyId: match?.[1] ?? null, service: match?.[2] ?? '' };
}

/**
 * The decoy AWS endpoint (a planted profile's `endpoint_url`): a call signed with a decoy key id
 * fires, and every call, signed or not, gets the answer AWS gives an unknown key: 403
 * InvalidClientTokenId (InvalidAccessKeyId for S3), in the protocol the client speaks.
 */
export async function answerAwsCall(tripwires: Tripwires, call: AwsCall): Promise<HttpAnswer> {
  const { keyId, service } = signedKeyId(call);
  if (keyId) {
    await tripwires.recordHit({
      secrets: [keyId],
      via: 'aws_api',
      client: { ip: call.ip, userAgent: call.userAgent },
      requestId: call.requestId,
    });
  }
  const requestId = randomUUID();
  const headers = { 'x-amzn-requestid': requestId };
  if (service === 's3') {
    const message = 'The AWS Access Key Id you provided does not exist in our records.';
    return {
      status: 403,
      headers: { ...headers, 'content-type': 'application/xml' },
      body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InvalidAccessKeyId</Code><Message>${message}</Message><AWSAccessKeyId>${keyId ?? ''}</AWSAccessKeyId><RequestId>${requestId}</RequestId></Error>`,
    };
  }
  const message = 'The security token included in the request is invalid.';
  if (call.contentType.startsWith('application/x-amz-json')) {
    return {
      status: 403,
      headers: {
        ...headers,
        'content-type': call.contentType.split(';')[0]!,
        'x-amzn-query-error': 'InvalidClientTokenId;Sender',
      },
      body: JSON.stringify({ __type: 'InvalidClientTokenId', message }),
    };
  }
  return {
    status: 403,
    headers: { ...headers, 'content-type': 'text/xml' },
    body: `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">\n  <Error>\n    <Type>Sender</Type>\n    <Code>InvalidClientTokenId</Code>\n    <Message>${message}</Message>\n  </Error>\n  <RequestId>${requestId}</RequestId>\n</ErrorResponse>\n`,
  };
}
