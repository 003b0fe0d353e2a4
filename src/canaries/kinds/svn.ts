import { randomInt, randomUUID } from 'node:crypto';
import { newTripwireUrl } from '../decoys';
import type { KindModule } from './kind';
import { platformOf } from './kind';

/** A property block of the dump format: `K`/`V` pairs with byte lengths, then `PROPS-END`. */
function props(values: Record<string, string>): string {
  const pairs = Object.entries(values).map(
    ([key, value]) =>
      `K ${Buffer.byteLength(key)}\n${key}\nV ${Buffer.byteLength(value)}\n${value}\n`,
  );
  return `${pairs.join('')}PROPS-END\n`;
}

/** A dump record: headers, the property block's and content's lengths, then both. */
function record(headers: string[], properties?: string, text?: string): string {
  const propLength = properties === undefined ? 0 : Buffer.byteLength(properties);
  const textLength = text === undefined ? 0 : Buffer.byteLength(text);
  const lengths = [
    ...(properties === undefined ? [] : [`Prop-content-length: ${propLength}`]),
    ...(text === undefined ? [] : [`Text-content-length: ${textLength}`]),
    `Content-length: ${propLength + textLength}`,
  ];
  return `${[...headers, ...lengths].join('\n')}\n\n${properties ?? ''}${text ?? ''}\n`;
}

const svnDate = (date: Date) => date.toISOString().replace(/Z$/, '000Z');

export const svn: KindModule = {
  howToUse:
    'Leave the dump where repository backups live. Loading it (svnadmin load) and checking out trunk makes the svn client fetch the trunk’s svn:externals from this service’s tripwire URL, which fires (platform SVN, the client’s address and version recorded); the checkout completes with a warning that the external could not be fetched. Reading the dump, or checking out with --ignore-externals, does not fire it.',
  risk: {
    base: 55,
    what: 'A decoy Subversion repository',
    action:
      'Someone loaded and checked out the repository dump where you left it; treat that backup location as exposed',
  },
  make: (settings) => {
    const { url, token } = newTripwireUrl(settings, 'v');
    const created = new Date(Date.now() - randomInt(60, 400) * 86_400_000);
    const committed = new Date(created.getTime() + randomInt(1, 20) * 86_400_000);
    const readme =
      '# deploy-scripts\n\nProvisioning and deployment scripts for the production estate.\nCredentials come from the vendor/ secrets checkout.\n';
    const dump = [
      'SVN-fs-dump-format-version: 2\n\n',
      `UUID: ${randomUUID()}\n\n`,
      record(['Revision-number: 0'], props({ 'svn:date': svnDate(created) })),
      record(
        ['Revision-number: 1'],
        props({
          'svn:author': 'deploy',
          'svn:date': svnDate(committed),
          'svn:log': 'Import deploy scripts; secrets stay in vendor/',
        }),
      ),
      record(
        ['Node-path: trunk', 'Node-kind: dir', 'Node-action: add'],
        props({ 'svn:externals': `${url}/secrets vendor\n` }),
      ),
      record(
        ['Node-path: trunk/README.md', 'Node-kind: file', 'Node-action: add'],
        props({}),
        readme,
      ),
    ].join('');
    return {
      value: url,
      tokens: [token],
      artifact: {
        filename: 'deploy-scripts.svndump',
        contentType: 'application/octet-stream',
        body: Buffer.from(dump),
      },
    };
  },
  platform: (source) => (/^SVN\//.test(source.userAgent) ? 'SVN' : platformOf(source.userAgent)),
};
