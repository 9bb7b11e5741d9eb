// What a new password must be (8–1024 characters: long passphrases welcome, bodies bounded), and
// two refusals on top: a password of nothing but spaces, and one of the passwords that
// credential-stuffing lists try first. The list is short on purpose: the most common 8+ character
// passwords of the public breach-frequency lists (NCSC's top-100k, SecLists' 10-million list),
// lowercased. It catches the guesses made first without pretending to be a full breach check.

const COMMON_PASSWORDS = new Set([
  '12345678', '123456789', '1234567890', '12345678910', '123123123', '11111111', '00000000', '87654321',
  '11223344', '12341234', '123321123', '1q2w3e4r', '1q2w3e4r5t', '1qaz2wsx', 'q1w2e3r4', 'qwertyui',
  'qwertyuiop', 'qwerty123', 'qwerty1234', 'asdfghjkl', 'asdfasdf', 'zxcvbnm1', 'password', 'password1',
  'password12', 'password123', 'password!', 'passw0rd', 'p@ssw0rd', 'p@ssword', 'iloveyou', 'iloveyou1',
  'sunshine', 'princess', 'football', 'baseball', 'welcome1', 'welcome123', 'abc12345', 'abcd1234',
  'letmein1', 'trustno1', 'superman', 'starwars', 'whatever', 'michelle', 'jennifer', 'computer',
  'internet', 'corvette', 'mercedes', 'samantha', 'liverpool', 'chelsea1', 'master12', 'changeme',
  'changeme1', 'administrator', 'admin123', 'admin1234', 'default1', 'secret12', 'qazwsxedc',
  'aa123456', 'a1234567', 'zaq12wsx', 'monkey12', 'dragon12', 'shadow12', 'football1', 'baseball1',
]);

/** Why a new password is refused, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.trim() === '') return 'must not be only spaces';
  if (COMMON_PASSWORDS.has(password.toLowerCase())) return 'is one of the most common passwords; choose another';
  return null;
}
