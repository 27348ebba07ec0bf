// Request and response schemas of the dynamic store routes (SDK paths and bodies).
import { Type } from 'typebox';
import { Bookmark } from '../shared/schemas.ts';
import { LABEL_MAX, MAX_BATCH_ACTIONS } from './domain.ts';

const StoreId = Type.String({ minLength: 1, maxLength: 128, description: 'dynamicDataId' });
const Secret = Type.String({
  maxLength: 256,
  description: "The store's dataSecret (not needed when signed in as creator or manager)",
});

export const StoreDocSchema = Type.Object(
  {
    handlerId: Type.String(),
    dynamicDataId: Type.String(),
    label: Type.String(),
    dataSecret: Type.Optional(Type.String({ description: 'Only returned to the creator or manager' })),
    data: Type.Array(Type.String(), {
      description: 'Member addresses in address order; the whole store unless dataTruncated',
    }),
    dataTruncated: Type.Boolean({
      description: 'true when the store holds more addresses than data carries (page through /values)',
    }),
    size: Type.Integer({ description: 'Number of addresses in the store' }),
    createdBy: Type.String(),
    managedBy: Type.String(),
    publicUseInClaims: Type.Boolean(),
    createdAt: Type.String({ description: 'UNIX ms' }),
    lastUpdated: Type.String({ description: 'UNIX ms' }),
  },
  { additionalProperties: false },
);

export const Pagination = Type.Object({ bookmark: Type.String(), hasMore: Type.Boolean() });

export const CreateBody = Type.Object(
  {
    handlerId: Type.String({ description: 'Must be "addresses"' }),
    label: Type.String({ maxLength: LABEL_MAX }),
    publicUseInClaims: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  {
    dynamicDataId: StoreId,
    label: Type.Optional(Type.String({ maxLength: LABEL_MAX })),
    publicUseInClaims: Type.Optional(Type.Boolean()),
    rotateDataSecret: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const DeleteBody = Type.Object({ dynamicDataId: StoreId }, { additionalProperties: false });

export const FetchBody = Type.Object(
  {
    dynamicDataIds: Type.Array(StoreId, { minItems: 1, maxItems: 100 }),
    dataSecret: Type.Optional(Secret),
  },
  { additionalProperties: false },
);

export const SearchQuery = Type.Object(
  { bookmark: Type.Optional(Bookmark), searchValue: Type.Optional(Type.String({ maxLength: LABEL_MAX })) },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: StoreId });
export const KeyParams = Type.Object({ id: StoreId, key: Type.String({ maxLength: 128 }) });
export const SecretQuery = Type.Object({ dataSecret: Type.Optional(Secret) }, { additionalProperties: false });
export const ValueQuery = Type.Object(
  { key: Type.String({ maxLength: 128 }), dataSecret: Type.Optional(Secret) },
  { additionalProperties: false },
);
export const ValuesQuery = Type.Object(
  { bookmark: Type.Optional(Bookmark), dataSecret: Type.Optional(Secret) },
  { additionalProperties: false },
);
export const ActivityQuery = Type.Object(
  { dynamicDataId: StoreId, bookmark: Type.Optional(Bookmark), dataSecret: Type.Optional(Secret) },
  { additionalProperties: false },
);

const Payload = Type.Object({ address: Type.String({ maxLength: 128 }) }, { additionalProperties: false });
const ActionName = Type.String({ description: '"add" or "remove"' });

export const SingleActionBody = Type.Object(
  {
    _isSimulation: Type.Optional(Type.Boolean()),
    dynamicDataId: StoreId,
    dataSecret: Type.Optional(Secret),
    actionName: ActionName,
    payload: Payload,
  },
  { additionalProperties: false },
);

export const BatchActionBody = Type.Object(
  {
    _isSimulation: Type.Optional(Type.Boolean()),
    dynamicDataId: StoreId,
    dataSecret: Type.Optional(Secret),
    actions: Type.Array(Type.Object({ actionName: ActionName, payload: Payload }, { additionalProperties: false }), {
      maxItems: MAX_BATCH_ACTIONS,
    }),
  },
  { additionalProperties: false },
);

export const StoreAction = Type.Object({ actionName: Type.String(), payload: Type.Object({ address: Type.String() }) });

export const ActivityDocSchema = Type.Object({
  _docId: Type.String(),
  dynamicDataId: Type.String(),
  updatedAt: Type.String({ description: 'UNIX ms' }),
  actions: Type.Array(StoreAction),
});

export const LookupValue = Type.Object({ key: Type.String(), inStore: Type.Boolean() });
