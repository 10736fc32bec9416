/**
 * AUTH_JWT_SECRET's shortest length (HS256 wants a key as long as its hash, 256 bits): checked
 * by config when the setting is read, and by the auth layer on a secret kept in DATA_DIR.
 */
export const MIN_JWT_SECRET_LENGTH = 32;
