import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { normaliseEmail } from './accounts/auth.service';
import { InvitesRepository } from './accounts/invites.repository';
import { PasswordHasher } from './accounts/passwords';
import { SessionsRepository } from './accounts/sessions.repository';
import { newSecretToken, tokenDigest } from './accounts/tokens';
import {
  EmailTakenError,
  USER_ROLES,
  type User,
  type UserRole,
  UsersRepository,
} from './accounts/users.repository';
import { loadConfigOrExit, type Config } from './config';
import { connectMongo, type Database } from './db/mongo';
import { generateSigner, verifierKey } from './evidence/log/signed-note';
import { keyInFile, logOrigin } from './evidence/log/signing-key';
import { PLAN_IDS, type PlanId } from './plans';

const USAGE = `Usage: npm run admin -- <command>   (in the image: node dist/src/admin.cli.js <command>)
  set-plan <email or user id> <${PLAN_IDS.join('|')}>
  set-role <email or user id> <${USER_ROLES.join('|')}>   operators may use the admin API (/api/admin)
  create-user <email>                 make an account; prints a one-time password to change
  reset-password <email or user id>   new one-time password; every session of the account ends
  revoke-sessions <email or user id>  ends every session of the account (it must log in again)
  invite <email> [days, default 7]    an invitation code for sign-up when SIGNUP_MODE=invite
  evidence-key [origin]               a new evidence signing key (stdout) and its public key (stderr)
  evidence-key --file <path> [origin] the same, written to <path> (owner-only) unless a key is there
                                      already; prints the public key. No database needed.`;

const INVITE_DAYS_DEFAULT = 7;

/** A password handed to the operator to pass on: 24 random characters, to be changed at once. */
const oneTimePassword = () => randomBytes(18).toString('base64url');

class UsageError extends Error {}

function parsedOrUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch {
    throw new UsageError();
  }
}

type Command = (db: Database, args: string[], config: Config) => Promise<number>;

async function findUser(users: UsersRepository, who: string | undefined): Promise<User | null> {
  if (!who) throw new UsageError();
  const user = who.includes('@')
    ? await users.findByEmail(normaliseEmail(who))
    : await users.findById(who);
  if (!user) console.error(`No account matches ${who}`);
  return user;
}

const hasher = () => new PasswordHasher({ concurrency: 1 });

const COMMANDS: Record<string, Command> = {
  async 'set-plan'({ db }, [who, plan]) {
    if (!PLAN_IDS.includes(plan as PlanId)) throw new UsageError();
    const users = new UsersRepository(db);
    const user = await findUser(users, who);
    if (!user) return 1;
    await users.setPlan(user.id, plan as PlanId, new Date());
    console.log(`${user.email} (${user.id}): plan ${user.plan} → ${plan}`);
    return 0;
  },

  async 'set-role'({ db }, [who, role]) {
    if (!USER_ROLES.includes(role as UserRole)) throw new UsageError();
    const users = new UsersRepository(db);
    const user = await findUser(users, who);
    if (!user) return 1;
    await users.setRole(user.id, role as UserRole, new Date());
    console.log(`${user.email} (${user.id}): role ${user.role ?? 'user'} → ${role}`);
    return 0;
  },

  async 'create-user'({ db }, [email], { plans }) {
    if (!email?.includes('@')) throw new UsageError();
    const password = oneTimePassword();
    try {
      const user = await new UsersRepository(db).create(
        normaliseEmail(email),
        await hasher().hash(password),
        new Date(),
        plans.defaultPlan,
      );
      console.log(`${user.email} (${user.id}) created; one-time password: ${password}`);
      return 0;
    } catch (err) {
      if (!(err instanceof EmailTakenError)) throw err;
      console.error(`${email} is already registered`);
      return 1;
    }
  },

  async 'reset-password'({ db }, [who]) {
    const users = new UsersRepository(db);
    const user = await findUser(users, who);
    if (!user) return 1;
    const password = oneTimePassword();
    await users.setPasswordHash(user.id, await hasher().hash(password), new Date());
    const ended = await new SessionsRepository(db).deleteAllOf(user.id);
    console.log(
      `${user.email} (${user.id}): ${ended} session(s) ended; one-time password: ${password}`,
    );
    return 0;
  },

  async 'revoke-sessions'({ db }, [who]) {
    const user = await findUser(new UsersRepository(db), who);
    if (!user) return 1;
    const ended = await new SessionsRepository(db).deleteAllOf(user.id);
    console.log(`${user.email} (${user.id}): ${ended} session(s) ended`);
    return 0;
  },

  async invite({ db }, [email, days = String(INVITE_DAYS_DEFAULT)]) {
    if (!email?.includes('@') || !/^\d{1,3}$/.test(days) || Number(days) < 1) {
      throw new UsageError();
    }
    const code = newSecretToken();
    const now = new Date();
    await new InvitesRepository(db).create({
      codeHash: tokenDigest(code),
      email: normaliseEmail(email),
      createdAt: now,
      expiresAt: new Date(now.getTime() + Number(days) * 86_400_000),
    });
    console.log(`invite code for ${normaliseEmail(email)} (valid ${days} days): ${code}`);
    return 0;
  },
};

/**
 * Makes the key that signs the evidence log's checkpoints (EVIDENCE_SIGNING_KEY), before any
 * database exists: printed, or kept in a file the API then reads (the compose file's one-shot
 * `evidence-key` service). The origin names the log in checkpoints, `<PUBLIC_BASE_URL host>/evidence`
 * by default.
 */
async function evidenceKey(args: string[]): Promise<number> {
  const { values, positionals } = parsedOrUsage(() =>
    parseArgs({ args, options: { file: { type: 'string' } }, allowPositionals: true }),
  );
  if (positionals.length > 1) throw new UsageError();
  const origin =
    positionals[0] ?? logOrigin({ PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL || DEFAULT_ORIGIN });
  if (values.file) {
    const { signer, made } = await keyInFile(values.file, origin);
    console.error(`${made ? 'made' : 'kept'} the evidence signing key in ${values.file}`);
    console.error(`public key (verifier key): ${verifierKey(signer)}`);
    return 0;
  }
  const { signer, skey } = generateSigner(origin);
  console.log(skey);
  console.error(`public key (verifier key): ${verifierKey(signer)}`);
  return 0;
}

const DEFAULT_ORIGIN = 'http://localhost:8080';

/** Operator commands: plans, accounts, passwords, sessions, invitations, the evidence key. */
async function main([name, ...args]: string[]): Promise<number> {
  if (name === 'evidence-key') {
    try {
      return await evidenceKey(args);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      console.error(USAGE);
      return 2;
    }
  }
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfigOrExit();
  const mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  try {
    return await command(mongo, args, config);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(USAGE);
    return 2;
  } finally {
    await mongo.client.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
