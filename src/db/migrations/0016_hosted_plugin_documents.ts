// Hosted plugins as plugin documents (issue 13, docs/hosted-plugins.md): one finalized, published, reviewed
// document per hosted plugin and locale (`<id>` in English, `<id>-es` in Spanish), owned by the
// null address, so they are readable through the plugin routes and listed in search. The service
// runs them in-process (plugins/registry.ts); `{base_url}` in their URI reads as PUBLIC_URL. They
// have no secret: nothing calls them over HTTP.
import type { Kysely } from 'kysely';
import { nullAddress } from '../../shared/addresses.ts';

type Field = { key: string; type: string; required?: boolean; label: [string, string]; helper?: [string, string] };
interface Hosted {
  id: string;
  name: [string, string];
  description: [string, string];
  fields: Field[];
  onDemand: boolean;
  /** Shown to the claimer and needs their interaction (display-only). */
  display?: boolean;
}

const HOSTED: Hosted[] = [
  {
    id: 'must-own-badges',
    name: ['Must own badges', 'Debe poseer insignias'],
    description: [
      'The claimer owns the listed tokens: $and / $or groups of assets, amounts and ownership times.',
      'Quien reclama posee los tokens indicados: grupos $and / $or de activos, cantidades y tiempos de propiedad.',
    ],
    fields: [
      {
        key: 'ownershipRequirements',
        type: 'ownershipRequirements',
        required: true,
        label: ['Ownership requirements', 'Requisitos de propiedad'],
      },
    ],
    onDemand: true,
  },
  {
    id: 'min-badge',
    name: ['Minimum BADGE balance', 'Saldo mínimo de BADGE'],
    description: [
      'The claimer holds at least this many whole BADGE (1 BADGE = 10^9 ubadge).',
      'Quien reclama tiene al menos esta cantidad de BADGE enteros (1 BADGE = 10^9 ubadge).',
    ],
    fields: [
      {
        key: 'minBalance',
        type: 'number',
        required: true,
        label: ['Minimum balance (whole BADGE)', 'Saldo mínimo (BADGE enteros)'],
      },
    ],
    onDemand: true,
  },
  {
    id: 'satisfies-claim',
    name: ['Satisfies another claim', 'Cumple otro reclamo'],
    description: ['The claimer has succeeded on another claim.', 'Quien reclama ya tuvo éxito en otro reclamo.'],
    fields: [
      {
        key: 'claimIdToCheck',
        type: 'string',
        required: true,
        label: ['Claim ID to check', 'ID del reclamo a comprobar'],
      },
    ],
    onDemand: true,
  },
  {
    id: 'username-set',
    name: ['Username set', 'Nombre de usuario definido'],
    description: ['The claimer has chosen a username.', 'Quien reclama eligió un nombre de usuario.'],
    fields: [],
    onDemand: true,
  },
  {
    id: 'url-clicker',
    name: ['Visit a link', 'Visitar un enlace'],
    description: [
      'Shows a link to open before claiming; always passes.',
      'Muestra un enlace para abrir antes de reclamar; siempre se cumple.',
    ],
    fields: [{ key: 'url', type: 'url', required: true, label: ['Link', 'Enlace'] }],
    onDemand: false,
    display: true,
  },
  {
    id: 'custom-instructions',
    name: ['Instructions', 'Instrucciones'],
    description: [
      'Shows instructions to the claimer; always passes.',
      'Muestra instrucciones a quien reclama; siempre se cumple.',
    ],
    fields: [{ key: 'instructions', type: 'string', required: true, label: ['Instructions', 'Instrucciones'] }],
    onDemand: false,
    display: true,
  },
  {
    id: 'github-contributions',
    name: ['GitHub contributions', 'Contribuciones en GitHub'],
    description: [
      "The claimer's linked GitHub account has contributed to a repository.",
      'La cuenta de GitHub vinculada de quien reclama contribuyó a un repositorio.',
    ],
    fields: [
      {
        key: 'repository',
        type: 'string',
        required: true,
        label: ['Repository (owner/name)', 'Repositorio (propietario/nombre)'],
      },
      {
        key: 'minContributions',
        type: 'number',
        label: ['Minimum contributions', 'Contribuciones mínimas'],
        helper: ['Default 1', 'Por defecto 1'],
      },
    ],
    onDemand: true,
  },
];

export async function up(db: Kysely<any>): Promise<void> {
  const owner = nullAddress();
  const now = Date.now();
  for (const h of HOSTED) {
    for (const [locale, i, pluginId] of [
      ['en', 0, h.id],
      ['es', 1, `${h.id}-es`],
    ] as const) {
      const metadata = {
        name: h.name[i],
        description: h.description[i],
        image: '',
        createdBy: 'platform',
        documentation: 'docs/hosted-plugins.md',
      };
      const config = {
        stateFunctionPreset: 'Stateless',
        duplicatesAllowed: true,
        requiresSessions: false,
        requiresUserInputs: h.display === true,
        reuseForNonIndexed: h.onDemand,
        receiveStatusWebhook: false,
        ...(h.display ? { skipProcessingWebhook: true } : {}),
        userInputsSchema: [],
        publicParamsSchema: h.fields.map((f) => ({
          key: f.key,
          label: f.label[i],
          type: f.type,
          ...(f.required ? { required: true } : {}),
          ...(f.helper ? { helper: f.helper[i] } : {}),
        })),
        privateParamsSchema: [],
        verificationCall: {
          uri: `{base_url}/api/v0/integrations/query/${pluginId}`,
          hardcodedInputs: [],
          passAddress: !h.display,
        },
      };
      await db
        .insertInto('plugin_docs')
        .values({
          plugin_id: pluginId,
          created_by: owner,
          managed_by: owner,
          locale,
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
          config: JSON.stringify(config),
          created_at: now,
          last_updated: now,
        })
        .execute();
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  const ids = HOSTED.flatMap((h) => [h.id, `${h.id}-es`]);
  await db.deleteFrom('plugin_versions').where('plugin_id', 'in', ids).execute();
  await db.deleteFrom('plugin_docs').where('plugin_id', 'in', ids).execute();
}
