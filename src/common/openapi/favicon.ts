/**
 * `/favicon.ico`: a 16×16 icon (a white check mark on blue; PNG inside an ICO container), kept in
 * the code so that it is part of the build without an asset-copy step. Browsers ask for it on every
 * page of the documentation; without it they would log a 404.
 */
export const FAVICON_ICO = Buffer.from(
  'AAABAAEAEBAAAAEAIACBAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAQAAAAEAgGAAAAH/P/YQAAAEhJREFUeNpjYAAC+fzX/8nBDJRohhsy9AwAAbINgAGyDMCmmWgDcGnGMACbQnyasboAWQMhzTi9gAzIjkZiNNPWAPolZUqzMwDeTYyPPkaNkwAAAABJRU5ErkJggg==',
  'base64',
);
export const FAVICON_CONTENT_TYPE = 'image/x-icon';
