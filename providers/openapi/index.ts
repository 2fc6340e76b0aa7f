export { openapiEnvSpecs, openapiProviders } from './config.js';
