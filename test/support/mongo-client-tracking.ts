/**
 * Records every MongoDB client a test file connects (its own or one inside the app it starts) and
 * forgets it once closed; `leak-checking-environment.ts` fails the file for any left open. One
 * forgotten client's heartbeat timer once kept a whole in-band run from exiting.
 */
import { MongoClient } from 'mongodb';

/** Each open client, with the stack that connected it: the leak check names where it came from. */
const open = new Map<MongoClient, string>();
(globalThis as { openMongoClients?: Map<MongoClient, string> }).openMongoClients = open;

const connect = MongoClient.prototype.connect;
MongoClient.prototype.connect = function (this: MongoClient) {
  open.set(this, new Error('connected').stack ?? '');
  return connect.call(this);
};

const close = MongoClient.prototype.close;
MongoClient.prototype.close = function (this: MongoClient, force?: boolean) {
  open.delete(this);
  return close.call(this, force);
};
