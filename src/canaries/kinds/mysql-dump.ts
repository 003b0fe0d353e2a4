import { randomInt } from 'node:crypto';
import { newDnsName } from '../decoys';
import type { KindModule } from './kind';

const DATABASES = ['production', 'crm', 'billing', 'customers'];
const FIRST = [
  'Emma',
  'Liam',
  'Olivia',
  'Noah',
  'Mia',
  'Lucas',
  'Sofia',
  'Elias',
  'Hannah',
  'Jonas',
];
const LAST = ['Schmidt', 'Miller', 'Rossi', 'Dubois', 'Nowak', 'Jensen', 'Garcia', 'Novak'];
const DOMAINS = ['gmail.com', 'outlook.com', 'web.de', 'yahoo.com', 'proton.me'];

const pick = <T>(items: readonly T[]): T => items[randomInt(items.length)]!;

export const mysqlDump: KindModule = {
  howToUse:
    'Leave the .sql where database backups live (a backup bucket, a share, a server’s home directory). Importing it with the mysql or mariadb client (mysql db < dump.sql) creates the tables, then the client’s reconnect command at the end of the dump resolves a host in this service’s DNS zone, which fires (the resolver is recorded, not the importer). The client then reports that it cannot reach that server. Importing with other tools (a GUI that runs only SQL statements, a parser reading the file) or reading it does not fire it, nor does a machine without DNS.',
  risk: {
    base: 55,
    what: 'A decoy database dump',
    action:
      'Someone imported the dump where you left it; treat the place it was stored (backup bucket, share, server) as exposed',
  },
  relay: 'dns',
  make: (settings) => {
    const { name, token } = newDnsName(settings);
    const database = pick(DATABASES);
    const now = new Date(Date.now() - randomInt(1, 30) * 86_400_000);
    const stamp = now.toISOString().slice(0, 19).replace('T', ' ');
    const rows = Array.from({ length: randomInt(40, 90) }, (_, i) => {
      const [first, last] = [pick(FIRST), pick(LAST)];
      // The row number before two random digits keeps every address unique (the column is UNIQUE).
      const email = `${first}.${last}${i}${randomInt(10, 100)}@${pick(DOMAINS)}`.toLowerCase();
      const hash = `$2y$10$${Buffer.from(`${first}${last}${randomInt(1e9)}${i}`)
        .toString('base64')
        .slice(0, 53)
        .padEnd(53, 'x')}`;
      return `(${i + 1},'${first}','${last}','${email}','${hash}','2024-${String(randomInt(1, 13)).padStart(2, '0')}-${String(randomInt(1, 29)).padStart(2, '0')} 10:${String(randomInt(60)).padStart(2, '0')}:00')`;
    });
    const dump = [
      '-- MariaDB dump 10.19  Distrib 10.11.6-MariaDB, for debian-linux-gnu (x86_64)',
      '--',
      `-- Host: localhost    Database: ${database}`,
      '-- ------------------------------------------------------',
      '-- Server version\t10.11.6-MariaDB-0+deb12u1',
      '',
      '/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;',
      '/*!40101 SET NAMES utf8mb4 */;',
      '/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;',
      '/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;',
      '',
      '--',
      '-- Table structure for table `customers`',
      '--',
      '',
      'DROP TABLE IF EXISTS `customers`;',
      'CREATE TABLE `customers` (',
      '  `id` int(11) NOT NULL AUTO_INCREMENT,',
      '  `first_name` varchar(64) NOT NULL,',
      '  `last_name` varchar(64) NOT NULL,',
      '  `email` varchar(255) NOT NULL,',
      '  `password_hash` char(60) NOT NULL,',
      '  `created_at` datetime NOT NULL,',
      '  PRIMARY KEY (`id`),',
      '  UNIQUE KEY `email` (`email`)',
      ') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;',
      '',
      '--',
      '-- Dumping data for table `customers`',
      '--',
      '',
      'LOCK TABLES `customers` WRITE;',
      '/*!40000 ALTER TABLE `customers` DISABLE KEYS */;',
      `INSERT INTO \`customers\` VALUES ${rows.join(',')};`,
      '/*!40000 ALTER TABLE `customers` ENABLE KEYS */;',
      'UNLOCK TABLES;',
      '',
      '/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;',
      '/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;',
      '/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;',
      // The client's own command (not SQL): reconnect, to the replica the dump was taken for.
      `\\r ${database} ${name}`,
      '',
      `-- Dump completed on ${stamp}`,
      '',
    ].join('\n');
    return {
      value: name,
      tokens: [token],
      artifact: {
        filename: `${database}-${now.toISOString().slice(0, 10)}.sql`,
        contentType: 'application/sql',
        body: Buffer.from(dump),
      },
    };
  },
  platform: () => 'mysql client',
};
