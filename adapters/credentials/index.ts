// The list of credential sources (read only by app/registry.ts): an account's credential_source.type names one.
import type { CredentialProvider } from '../../core/types.ts';
import { aws } from './aws.ts';
import { googleServiceAccount } from './google-service-account.ts';
import { oauth2ClientCredentials, oauth2RefreshToken } from './oauth2.ts';

export const credentialSources: CredentialProvider[] = [oauth2ClientCredentials, oauth2RefreshToken, googleServiceAccount, aws];
