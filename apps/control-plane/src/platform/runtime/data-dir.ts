import { statSync } from 'node:fs';

/**
 * What to tell the operator when DATA_DIR can be read by other users: a directory the app
 * creates is 0700, but one that existed before (an upgrade, a mounted volume) keeps its mode,
 * and the event log in it holds every owner's name and bill. Told, not changed: a backup
 * agent or a volume's group may rely on the mode. Null when private or absent.
 */
export const openDataDirWarning = (dataDir: string): string | null => {
  let mode: number;
  try {
    mode = statSync(dataDir).mode & 0o777;
  } catch {
    return null;
  }
  if ((mode & 0o077) === 0) return null;
  return (
    `DATA_DIR ${dataDir} can be read by other users (mode ${mode.toString(8).padStart(4, '0')}); ` +
    `it holds the event log and the JWT secret: chmod 700 it`
  );
};
