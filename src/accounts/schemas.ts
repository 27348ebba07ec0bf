// Request and response schemas of the account routes (the reference client's shapes).
import { Type } from 'typebox';
import { AddressString, Bookmark } from '../shared/schemas.ts';
import { MAX_ACCOUNTS_PER_REQUEST, USERNAME_MAX, USERNAME_RULE } from './accounts.ts';
import { ACCOUNT_VIEW_TYPES } from './views.ts';

const Username = Type.String({
  minLength: 1,
  maxLength: 64,
  description: `${USERNAME_RULE} Matched regardless of letter case.`,
});

export const UpdateAccountBody = Type.Object(
  { username: Type.String({ maxLength: 64, description: `The new username, or '' to clear it. ${USERNAME_RULE}` }) },
  { additionalProperties: false },
);

export const EmptyResponse = Type.Object({}, { additionalProperties: false });

export const AccountQuery = Type.Object(
  { address: Type.Optional(AddressString), username: Type.Optional(Username) },
  { additionalProperties: false },
);

const ViewFetch = Type.Object(
  {
    viewType: Type.String({
      maxLength: 64,
      description: `One of ${ACCOUNT_VIEW_TYPES.join(', ')} (pointsActivity is always an empty page: no points ledger here)`,
    }),
    viewId: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Client-chosen key of the page in `views`; keep it stable while paging',
    }),
    bookmark: Bookmark,
    oldestFirst: Type.Optional(Type.Boolean({ description: 'Oldest first instead of newest first' })),
  },
  { additionalProperties: false },
);

export const UsersBody = Type.Object(
  {
    accountsToFetch: Type.Array(
      Type.Object(
        {
          address: Type.Optional(AddressString),
          username: Type.Optional(Username),
          viewsToFetch: Type.Optional(Type.Array(ViewFetch)),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_ACCOUNTS_PER_REQUEST },
    ),
  },
  { additionalProperties: false },
);

const Doc = Type.Object({ _docId: Type.String() }, { additionalProperties: true });

export const AccountSchema = Type.Object(
  {
    _docId: Type.String(),
    platformAddress: Type.String({ description: 'Native bech32 address: the account id' }),
    ethAddress: Type.String({ description: 'EIP-55 0x form of the same 20 bytes' }),
    username: Type.Optional(Type.String({ maxLength: USERNAME_MAX })),
    balance: Type.Optional(
      Type.Object(
        { amount: Type.String(), denom: Type.String() },
        { additionalProperties: false, description: 'Native balance from the chain' },
      ),
    ),
    balanceError: Type.Optional(
      Type.String({ description: 'Why balance is absent: the chain is not configured or did not answer' }),
    ),
    views: Type.Record(
      Type.String(),
      Type.Object(
        {
          ids: Type.Array(Type.String()),
          type: Type.String(),
          pagination: Type.Object(
            { bookmark: Type.String(), hasMore: Type.Boolean() },
            { additionalProperties: false },
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: Type.Array(Doc),
    description: 'Plus one array of documents per view field (signinRequests, claimActivity, activity, collected, ...)',
  },
);

export const AccountResponse = Type.Object({ account: AccountSchema }, { additionalProperties: false });
export const AccountsResponse = Type.Object({ accounts: Type.Array(AccountSchema) }, { additionalProperties: false });
