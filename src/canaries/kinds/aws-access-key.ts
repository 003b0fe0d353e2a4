import { randomBytes } from 'node:crypto';
import {
  AWS_ID_ALPHABET,
  randomFrom,
  trimmedBase,
  type DecoyFile,
  type DecoySettings,
} from '../decoys';
import type { KindModule } from './kind';

export const awsAccessKey: KindModule = {
  howToUse:
    'Plant the two files as ~/.aws/credentials and ~/.aws/config (or the pair alone where cloud credentials live). Any AWS CLI or SDK call made with that profile is sent, signed with this key id, to this service’s decoy AWS endpoint (the config’s endpoint_url) and fires; so does either half presented to this service as a key, a password or in an AWS Signature V4 header. It does not fire when the key is used against real AWS without that endpoint_url (for example copied into another machine’s profile): AWS never tells us.',
  risk: {
    base: 60,
    what: 'A decoy cloud access key',
    action: 'Find where this key was stored and treat that place as exposed',
  },
  make: (settings) => {
    const id = `AKIA${randomFrom(AWS_ID_ALPHABET, 16)}`;
    const secret = awsSecret();
    return { value: id, secret, files: awsProfile(id, secret, settings), tokens: [id, secret] };
  },
};

/**
 * Whether a 40-character base64 string is shaped like an AWS secret access key: it mixes upper
 * case, lower case and digits (which rules out hex digests and words). Shield's inspection looks
 * for strings of this shape, so every secret planted here has it.
 */
export const isAwsSecretShaped = (text: string) =>
  /[A-Z]/.test(text) && /[a-z]/.test(text) && /\d/.test(text);

/** 40 random base64 characters, drawn again in the rare case (about 1 in 900) they lack a digit. */
function awsSecret(): string {
  for (;;) {
    const secret = randomBytes(30).toString('base64');
    if (isAwsSecretShaped(secret)) return secret;
  }
}

/**
 * The profile a thief would find: any AWS CLI or SDK call made with it is sent, signed with the
 * decoy key id, to this service's decoy AWS endpoint (`endpoint_url`, honoured by the CLI v2 and
 * SDKs since 2023). The key used against real AWS with another endpoint is not seen here.
 */
function awsProfile(id: string, secret: string, settings: DecoySettings): DecoyFile[] {
  return [
    {
      path: '~/.aws/credentials',
      content: `[default]\naws_access_key_id = ${id}\naws_secret_access_key = ${secret}\n`,
    },
    {
      path: '~/.aws/config',
      content: `[default]\nregion = us-east-1\nendpoint_url = ${trimmedBase(settings)}/aws\n`,
    },
  ];
}
