/** The caller, as resolved by authentication, attached to the request. */
export interface AuthenticatedUser {
  id: string;
  username: string;
  displayName: string | null;
  isAdmin: boolean;
  /** 'token' for an access token, 'api_key' for a personal API key. */
  via: 'token' | 'api_key';
}
