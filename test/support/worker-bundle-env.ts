// A setup file of every project: the worker threads that the servers a test starts in-process
// would load from the TypeScript sources through tsx (the flow-job pool's, the embedded store's)
// load this run's bundle of the same sources instead (server-bundle.ts says what that saves).
import { serverBundleDir } from './server-bundle.ts';

process.env.VOXFLOW_WORKER_BUNDLE_DIR = serverBundleDir();
