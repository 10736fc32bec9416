export * from './messages';
export * from './decider';
export * from './errors';
export * from './ids';
export * from './codec';
export * from './throttled-log';
export * from './turns';
export * from './within';
