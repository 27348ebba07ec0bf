// password: a shared secret, compared in constant time. Stored encrypted with the private params.
import { safeEqual } from '../shared/crypto.ts';
import { definePlugin } from './define.ts';

export const password = definePlugin<Record<string, never>, { password: string }>({
  id: 'password',
  params: {
    private: [
      {
        key: 'password',
        label: 'Password',
        type: 'string',
        required: true,
        helper: 'Stored encrypted; only you can read it back.',
        nonEmpty: true,
        maxLength: 1024,
        missingIsInvalid: true,
      },
    ],
  },
  input: [{ key: 'password', label: 'Password', type: 'string', required: true }],
  form: {
    name: 'Password',
    description: 'A shared secret the user must enter.',
    details: 'Requires the password.',
  },
  async evaluate({ privateParams, input }) {
    const given = (input as { password?: unknown } | undefined)?.password;
    if (typeof given !== 'string' || !safeEqual(given, privateParams.password))
      return { success: false, error: 'Incorrect password.' };
    return { success: true };
  },
});
