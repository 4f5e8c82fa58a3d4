/** Names of the OpenAPI security schemes (components.securitySchemes). */
export const BEARER_SCHEME = 'bearer';
export const API_KEY_SCHEME = 'api_key';
/** The header an API key may be sent in instead of `Authorization: Bearer`. */
export const API_KEY_HEADER = 'X-API-Key';
