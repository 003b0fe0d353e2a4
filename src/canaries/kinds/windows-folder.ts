import { strToU8, zipSync } from 'fflate';
import { newDnsName } from '../decoys';
import type { KindModule } from './kind';

/** MS-DOS attributes of a zip entry: desktop.ini is hidden and system, as Windows keeps it. */
const HIDDEN_SYSTEM = 0x06;
/** Explorer reads a folder's desktop.ini only when the folder is read-only or system. */
const READ_ONLY_DIRECTORY = 0x11;
const FOLDERS = ['Finance', 'Backups', 'HR Confidential', 'IT Admin'];
/** The user, machine and domain Explorer expands into the icon's UNC host. */
const WHO = /^([^.]*)\.([^.]*)\.([^.]*)\.ini\./;

export const windowsFolder: KindModule = {
  howToUse:
    'Unzip it on a Windows file share or desktop and leave the folder where an intruder browses. When Windows Explorer shows the folder it reads desktop.ini, whose icon lives on a UNC path whose host is in this service’s DNS zone with the user, machine and domain names in it: the lookup fires and names them. Browsing from another system (Linux, macOS, a backup tool) or a Windows machine without outbound DNS does not fire it; unzipping tools that drop the folder’s attributes may stop Explorer from reading desktop.ini.',
  risk: {
    base: 50,
    what: 'A decoy Windows folder',
    action: 'Someone browsed the folder where you put it; treat that share or machine as exposed',
  },
  relay: 'dns',
  make: (settings) => {
    const { name, token } = newDnsName(settings);
    const folder = FOLDERS[name.charCodeAt(0) % FOLDERS.length]!;
    const ini = `[.ShellClassInfo]\r\nIconResource=\\\\%USERNAME%.%COMPUTERNAME%.%USERDOMAIN%.INI.${name}\\resource.dll\r\n`;
    const body = zipSync({
      [`${folder}/`]: [new Uint8Array(0), { os: 0, attrs: READ_ONLY_DIRECTORY }],
      [`${folder}/desktop.ini`]: [strToU8(ini), { os: 0, attrs: HIDDEN_SYSTEM }],
    });
    return {
      value: name,
      tokens: [token],
      artifact: {
        filename: `${folder}.zip`,
        contentType: 'application/zip',
        body: Buffer.from(body),
      },
    };
  },
  platform: (source) => {
    const who = WHO.exec(source.resolver?.name ?? '');
    return who ? `Windows Explorer (${who[2]}, user ${who[3]}\\${who[1]})` : 'Windows Explorer';
  },
};
