/**
 * `list_integrations` for a user who has connected nothing, in the registry's order: every
 * configured service unconnected, the built-ins (which need no account) always connected.
 */
export const UNCONNECTED_LISTING = [
  { name: 'github', version: '1.0.0', connected: false },
  { name: 'atlassian-jira', version: '1.0.0', connected: false },
  { name: 'slack', version: '1.0.0', connected: false },
  { name: 'linear', version: '1.0.0', connected: false },
  { name: 'hackernews', version: '1.0.0', connected: false },
  { name: 'browser', version: '1.0.0', connected: true },
  { name: 'jots', version: '1.0.0', connected: true },
];
