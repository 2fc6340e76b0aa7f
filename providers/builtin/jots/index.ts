import { defineProvider } from '../../sdk/index.js';
import { jotsTools } from './tools.js';

export const jots = defineProvider(
  {
    name: 'jots',
    version: '1.0.0',
    displayName: 'Jots',
    description: "The caller's private notes",
    auth: 'none',
    envPrefix: 'JOTS',
    toolPrefix: 'jots',
  },
  jotsTools,
);
