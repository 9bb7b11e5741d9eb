// Pipecat Flows interop (docs/flows.md): a FlowConfig in as a Voxflow flow, a Voxflow flow out as a
// FlowConfig, each with a diagnostic for what does not map. Pure: bundled into the studio too.
export { importPipecatFlow, isPipecatFlowData, looksLikePipecatFlow, MAX_PIPECAT_BYTES, type PipecatImportOptions } from './import.ts';
export { exportPipecatFlow, exportPipecatFlowText, type ExportedPipecatFlow } from './export.ts';
export type { ExportDiagnostic, PipecatExport, PipecatFlowConfig, PipecatImport, PipecatNode } from './types.ts';
export { exportDeclarativeFlow, exportDeclarativeFlowText, type DeclarativeExport, type DeclarativeFlowConfig, type ExportedDeclarativeFlow } from './export-declarative.ts';
export { pipecatFormatOf, type PipecatFormat } from './format.ts';
