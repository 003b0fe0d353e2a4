import { newDnsName } from '../decoys';
import type { KindModule } from './kind';

/** The command watched: one an intruder runs early and an administrator rarely does. */
const COMMAND = 'whoami.exe';
const IFEO = 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion';
/** The machine and user PowerShell puts into the name it resolves. */
const WHO = /^([^.]*)\.un\.([^.]*)\.cmd\./;

export const sensitiveCommand: KindModule = {
  howToUse: `Import the .reg file as an administrator on a Windows machine (reg import, or double-click). Windows then watches ${COMMAND}: when it exits, the silent-process-exit monitor resolves a name in this service’s DNS zone with the machine and user names in it, which fires. Remove the two keys to stop it. It does not fire for a renamed copy of the command, on machines without outbound DNS, or where an attacker reads and deletes the keys first.`,
  risk: {
    base: 65,
    what: `A watched command (${COMMAND})`,
    action: `Someone ran ${COMMAND} on the named machine; treat it as compromised and check who is logged on`,
  },
  relay: 'dns',
  make: (settings) => {
    const { name, token } = newDnsName(settings);
    // The monitor runs hidden: PowerShell resolves the name, with the machine and user in it.
    const monitor = `cmd.exe /c start /min powershell.exe -NoProfile -WindowStyle Hidden -Command \\"Resolve-DnsName -Name ($env:COMPUTERNAME + '.UN.' + $env:USERNAME + '.CMD.${name}') -ErrorAction SilentlyContinue\\"`;
    const reg = [
      'Windows Registry Editor Version 5.00',
      '',
      `[${IFEO}\\Image File Execution Options\\${COMMAND}]`,
      '"GlobalFlag"=dword:00000200',
      '',
      `[${IFEO}\\SilentProcessExit\\${COMMAND}]`,
      '"ReportingMode"=dword:00000001',
      `"MonitorProcess"="${monitor}"`,
      '',
    ].join('\r\n');
    return {
      value: name,
      tokens: [token],
      artifact: {
        filename: `${COMMAND.replace(/\.exe$/, '')}-audit.reg`,
        contentType: 'text/plain; charset=utf-8',
        body: Buffer.from(reg),
      },
    };
  },
  platform: (source) => {
    const who = WHO.exec(source.resolver?.name ?? '');
    return who ? `${COMMAND} on ${who[1]} (user ${who[2]})` : COMMAND;
  },
};
