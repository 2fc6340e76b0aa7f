export { documentPath, loadDocumentFile, openapiEnvSpecs, openapiProviders, parseOpenApiIntegrations } from './config.js';
export { DOCUMENT_LIMITS, OpenApiError, parseDocument } from './document.js';
export { convertOperations, OPERATION_LIMITS } from './operations.js';
export { openapiProvider } from './provider.js';
