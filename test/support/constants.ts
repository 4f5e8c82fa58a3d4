export const TEST_ADMIN = { username: 'admin', password: 'admin-password-for-tests' };
export const TEST_AUTH_SECRET = 'test-secret-'.padEnd(48, 'x');
export const DEFAULT_PASSWORD = 'correct horse battery staple';
