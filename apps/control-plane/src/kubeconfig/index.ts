/** The kubeconfig slice as the app sees it. */
export { KubeconfigEvent, kubeconfigCodec, kubeconfigStreamId } from './kubeconfig.events';
export { KubeconfigModule } from './kubeconfig.module';
