import { UsersRepository } from './accounts/users.repository';
import { normaliseEmail } from './accounts/auth.service';
import { loadConfigOrExit } from './config';
import { connectMongo } from './db/mongo';
import { PLAN_IDS, type PlanId } from './plans';

const USAGE = `Usage: npm run admin -- set-plan <email or user id> <${PLAN_IDS.join('|')}>`;

/** Operator command: changes an account's plan. */
async function main(argv: string[]): Promise<number> {
  const [command, who, plan] = argv;
  if (command !== 'set-plan' || !who || !PLAN_IDS.includes(plan as PlanId)) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfigOrExit();
  const mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  try {
    const users = new UsersRepository(mongo.db);
    const user = who.includes('@')
      ? await users.findByEmail(normaliseEmail(who))
      : await users.findById(who);
    if (!user) {
      console.error(`No account matches ${who}`);
      return 1;
    }
    await users.setPlan(user.id, plan as PlanId, new Date());
    console.log(`${user.email} (${user.id}): plan ${user.plan} → ${plan}`);
    return 0;
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
