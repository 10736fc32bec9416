export * from './aggregate-cache';
export * from './command-pipeline';
export * from './subscription-runner';
export * from './projection';
export * from './reactor';
export * from './checkpoint-store';
export * from './workflow-runner';
