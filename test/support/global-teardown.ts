import { rm } from 'node:fs/promises';

export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.testStack;
  if (!stack) return;
  for (const service of stack.services) await service.stop();
  await rm(stack.dataDir, { recursive: true, force: true });
}
