import { randomInt } from 'node:crypto';
import { platformOf } from './kind';
import type { OfficeProperties } from './ooxml';

/**
 * What makes a decoy document worth opening and unremarkable once open: a name, a title and a few
 * lines of an ordinary internal document, an author and company, and dates of some months ago.
 */
const DOCUMENTS = [
  {
    name: 'Salary review 2026',
    lines: [
      'Confidential: HR and department heads only.',
      'Proposed adjustments following the annual review cycle are listed per department. Figures are gross annual amounts before the merit increase is applied.',
      'Please return comments to HR by the end of the month.',
    ],
  },
  {
    name: 'Server passwords',
    lines: [
      'Break-glass credentials for the production estate. Do not share outside the ops team.',
      'Rotate after every use and record the rotation in the change log.',
    ],
  },
  {
    name: 'Acquisition shortlist Q3',
    lines: [
      'Board eyes only. Candidates under evaluation ahead of the Q3 strategy meeting.',
      'Valuations are indicative and based on last reported revenue.',
    ],
  },
  {
    name: 'VPN access and remote admin',
    lines: [
      'How to reach the management network from outside the office.',
      'Accounts are personal; shared accounts are listed at the end for emergencies.',
    ],
  },
];
const AUTHORS = [
  'Sarah Mitchell',
  "James O'Connor",
  'Priya Natarajan',
  'Daniel Weber',
  'Anna Kowalska',
];
const COMPANIES = ['Finance', 'Operations', 'IT Services', 'Group HR'];
const DAY_MS = 86_400_000;

export interface OfficeLook {
  filename: string;
  title: string;
  paragraphs: string[];
  properties: Omit<OfficeProperties, 'application'>;
}

const pick = <T>(items: readonly T[]): T => items[randomInt(items.length)]!;

export function officeLook(extension: string): OfficeLook {
  const document = pick(DOCUMENTS);
  const created = new Date(Date.now() - randomInt(40, 400) * DAY_MS - randomInt(DAY_MS));
  const modified = new Date(created.getTime() + randomInt(2, 30) * DAY_MS + randomInt(DAY_MS));
  return {
    filename: `${document.name}.${extension}`,
    title: document.name,
    paragraphs: document.lines,
    properties: {
      title: document.name,
      author: pick(AUTHORS),
      company: pick(COMPANIES),
      created,
      modified: new Date(Math.min(modified.getTime(), Date.now() - DAY_MS)),
    },
  };
}

/**
 * The office suite a document's fetch reveals: Microsoft Office says `ms-office` or `Microsoft
 * Office` in its user agent, LibreOffice names itself; anything else as any client.
 */
export function platformFromAgent(userAgent: string, application: string): string {
  if (/LibreOffice/i.test(userAgent)) return 'LibreOffice';
  if (/ms-office|Microsoft Office|MSOffice/i.test(userAgent)) return `Microsoft ${application}`;
  return platformOf(userAgent);
}
