import { MongoClient } from 'mongodb';
import type { LocalMongo } from '../../tools/stack';

/**
 * A client of a database process the test owns (a short server selection, as the service's: a
 * write waiting while the database is down fails rather than waits), whose commands are seen before they are
 * sent: after `killBefore(command, collection)`, the next such command SIGKILLs the database
 * process instead of reaching it, synchronously, before the driver writes it, so the server never
 * runs again to read it. `mongo` is read at each kill: the test may start the database again.
 */
export async function killableClient(mongo: () => LocalMongo) {
  const client = new MongoClient(mongo().address, {
    serverSelectionTimeoutMS: 2_000,
    monitorCommands: true,
  });
  let target: { command: string; collection: string } | null = null;
  client.on('commandStarted', (event) => {
    if (
      target &&
      event.commandName === target.command &&
      event.command[event.commandName] === target.collection
    ) {
      target = null;
      process.kill(-mongo().process.child.pid!, 'SIGKILL');
    }
  });
  await client.connect();
  return {
    client,
    killBefore(command: string, collection: string) {
      target = { command, collection };
    },
    /** Whether the armed kill has come. */
    get killed() {
      return target === null;
    },
  };
}
