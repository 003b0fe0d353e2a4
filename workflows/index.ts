// Every export here is a workflow type, and a deployed name is permanent: re-export workflows only.
export { agentWatchWorkflow } from './agent-watch.workflow';
export { alertWorkflow } from './alert.workflow';
export { floorWorkflow } from './floor.workflow';
export { weeklyDigestWorkflow } from './weekly-digest.workflow';
export { workerPingWorkflow } from './worker-ping.workflow';
