// The social plugins as plugin documents (issue 30): `discord`, `github`, `google`, `twitch` and
// `twitter` get one finalized, published, reviewed document each, owned by the null address like
// the hosted plugins (0016), so a client can read their params through GET /api/v0/plugin/{id}
// and find them in search. They stay core plugins, run in-process: the documents carry no
// verificationCall (nothing is called) and a claim naming one runs the core plugin whatever its
// version. English only: their ids are core ids no creator can take, while a localised id
// (`discord-es`) is an ordinary plugin id that a creator may already hold.
import type { Kysely } from 'kysely';
import { nullAddress } from '../../shared/addresses.ts';

const PROVIDERS: Array<[id: string, name: string]> = [
  ['discord', 'Discord'],
  ['github', 'GitHub'],
  ['google', 'Google'],
  ['twitch', 'Twitch'],
  ['twitter', 'X (Twitter)'],
];

function config(name: string) {
  return {
    stateFunctionPreset: 'Stateless',
    duplicatesAllowed: true,
    requiresSessions: false,
    requiresUserInputs: false,
    // stateful (claims counted per account): not usable in on-demand claims
    reuseForNonIndexed: false,
    receiveStatusWebhook: false,
    userInputsSchema: [],
    publicParamsSchema: [
      {
        key: 'users',
        label: `Allowed ${name} accounts`,
        type: 'string',
        arrayField: true,
        helper: 'Usernames (any letter case) or account ids; empty: any linked account. At most 100,000.',
      },
      {
        key: 'maxUsesPerUser',
        label: `Maximum claims per ${name} account`,
        type: 'number',
        helper: 'Counted per account across every wallet it is linked to; 0 or empty: no cap.',
      },
      {
        key: 'hasPrivateList',
        label: 'The list is private',
        type: 'boolean',
        helper: 'The allowed accounts are then the private usernames list, and users stays empty.',
        hideFromDetailsDisplay: true,
      },
    ],
    privateParamsSchema: [
      {
        key: 'usernames',
        label: `Private list of ${name} accounts`,
        type: 'string',
        arrayField: true,
        helper: 'Used when the list is private; hidden from claimers.',
      },
    ],
  };
}

export async function up(db: Kysely<any>): Promise<void> {
  const owner = nullAddress();
  const now = Date.now();
  for (const [pluginId, name] of PROVIDERS) {
    const metadata = {
      name,
      description: `The claimer's address has linked a ${name} account (the connections flow), optionally one on a list; each ${name} account's claims are counted across every wallet it is linked to.`,
      image: '',
      createdBy: 'platform',
      documentation: 'docs/connections.md',
    };
    await db
      .insertInto('plugin_docs')
      .values({
        plugin_id: pluginId,
        created_by: owner,
        managed_by: owner,
        locale: 'en',
        metadata: JSON.stringify(metadata),
        name_search: metadata.name.toLowerCase(),
        to_publish: 1,
        review_completed: 1,
        approved_users: '[]',
        plugin_secret_enc: '',
        created_at: now,
        last_updated: now,
        deleted_at: null,
      })
      .execute();
    await db
      .insertInto('plugin_versions')
      .values({
        plugin_id: pluginId,
        version: 1,
        finalized: 1,
        config: JSON.stringify(config(name)),
        created_at: now,
        last_updated: now,
      })
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const ids = PROVIDERS.map(([id]) => id);
  await db.deleteFrom('plugin_versions').where('plugin_id', 'in', ids).execute();
  await db.deleteFrom('plugin_docs').where('plugin_id', 'in', ids).execute();
}
