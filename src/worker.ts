import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities';
import { startNotice } from './alerts/alert-workflows';
import { builtInSettings } from './alerts/built-in-channels';
import { IpEnricher } from './alerts/enrichment';
import { loadConfigOrExit } from './config';
import { serveMetrics } from './metrics';
import { connectMongo } from './db/mongo';
import { createLogger } from './logger';
import { logUnhandledRejections } from './unhandled-rejections';
import { createTemporal } from './temporal/client';
import { installTemporalRuntime } from './temporal/runtime';
import { startTracing, workerTracing } from './tracing';

/** Worker composition root: config → logger → MongoDB → activities → worker; scale by running more. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'worker');
  logUnhandledRejections(logger);
  const tracing = startTracing('tripwire-worker', {
    otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
  });
  const sdkMetrics = await installTemporalRuntime(logger, {
    sdkMetrics: config.WORKER_METRICS_PORT > 0,
  });
  const mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  // A client beside the worker's connection: a channel the worker disables is announced by a
  // notice in a workflow of its own.
  const temporal = createTemporal(config);

  const worker = await Worker.create({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    workflowsPath: require.resolve('../workflows'),
    maxConcurrentActivityTaskExecutions: config.WORKER_ACTIVITY_SLOTS,
    maxConcurrentWorkflowTaskExecutions: config.WORKER_WORKFLOW_TASK_SLOTS,
    maxConcurrentWorkflowTaskPolls: Math.min(
      config.WORKER_POLLERS,
      config.WORKER_WORKFLOW_TASK_SLOTS,
    ),
    maxConcurrentActivityTaskPolls: Math.min(config.WORKER_POLLERS, config.WORKER_ACTIVITY_SLOTS),
    ...(tracing && workerTracing(tracing)),
    activities: createActivities({
      db: mongo.db,
      allowPrivateTargets: config.ALLOW_PRIVATE_WEBHOOK_TARGETS,
      outboundDeny: config.OUTBOUND_DENY_CIDRS,
      builtIns: builtInSettings(config),
      enricher: new IpEnricher({
        abuseIpdbKey: config.ABUSEIPDB_API_KEY,
        abuseIpdbBaseUrl: config.ABUSEIPDB_BASE_URL,
        dataDir: config.IP_DATA_DIR,
      }),
      channelHealth: {
        disableAfterMs: config.CHANNEL_DISABLE_AFTER,
        notify: (notice) => startNotice(temporal, notice),
      },
    }),
  });
  // Metrics are for operators: a taken port is logged, and the worker delivers alerts anyway.
  const metrics =
    config.WORKER_METRICS_PORT > 0
      ? await serveMetrics(config.HOST, config.WORKER_METRICS_PORT, {
          healthy: () => worker.getState() === 'RUNNING',
          sdkMetrics,
        }).catch((err: unknown) => {
          logger.error({ err }, 'worker metrics endpoint not started');
          return undefined;
        })
      : undefined;
  logger.info(
    { taskQueue: config.TEMPORAL_TASK_QUEUE, metricsPort: config.WORKER_METRICS_PORT || null },
    'worker running',
  );
  // Resolves after SIGINT/SIGTERM once in-flight tasks have finished.
  await worker.run();
  metrics?.close();
  await connection.close();
  await temporal.close();
  await mongo.client.close();
  await tracing?.shutdown();
  logger.info('worker stopped');
}

main().catch((err: unknown) => {
  console.error('worker failed:', err);
  process.exit(1);
});
