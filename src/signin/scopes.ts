// Scopes a user can approve for an application. `scopeId` is what routes check; `scopeName` is
// what the consent page and `/api/v0/auth/status` show.
export const SCOPES = [
  {
    scopeId: 'completeClaims',
    scopeName: 'Complete Claims',
    description: 'Complete claims on your behalf (claims with an initiatedBy plugin; reserved codes).',
  },
  {
    scopeId: 'readPrivateClaimData',
    scopeName: 'Read Private Claim Data',
    description: 'Read private params of claims you created or manage.',
  },
  { scopeId: 'manageClaims', scopeName: 'Manage Claims', description: 'Create, update and delete claims.' },
  {
    scopeId: 'manageDynamicStores',
    scopeName: 'Manage Dynamic Stores',
    description: 'Create, update and delete dynamic stores, and edit their contents.',
  },
  {
    scopeId: 'managePlugins',
    scopeName: 'Manage Plugins',
    description:
      'Create, update and delete your claim plugins (plugin documents), and read their secrets and error logs.',
  },
  {
    scopeId: 'manageDeveloperApps',
    scopeName: 'Manage Developer Apps',
    description: 'Create, update and delete your OAuth applications.',
  },
  {
    scopeId: 'manageConnections',
    scopeName: 'Manage Connections',
    description:
      'Start linking your Discord, GitHub, Google, Twitch or X account to your wallet, and unlink them. Each link still needs your wallet in your browser: your signature, or your sign-in to this service.',
  },
  {
    scopeId: 'manageLinkedWallets',
    scopeName: 'Manage Linked Wallets',
    description:
      'Link further wallets to your account and unlink them. Each link still needs the signature of the wallet being linked.',
  },
  {
    scopeId: 'manageAccount',
    scopeName: 'Manage Account',
    description:
      'Set your username, and read your private account views (your sign-ins to apps, all your claim activity).',
  },
  // OpenID Connect: the token response adds an id_token, and the access token opens userinfo
  {
    scopeId: 'openid',
    scopeName: 'OpenID Identity',
    description: 'Give the app your address as an OpenID Connect identity (an id_token and the userinfo endpoint).',
  },
] as const;

export type ScopeId = (typeof SCOPES)[number]['scopeId'];

export const SCOPE_IDS: readonly string[] = SCOPES.map((s) => s.scopeId);

export const scopeName = (id: string): string => SCOPES.find((s) => s.scopeId === id)?.scopeName ?? id;
