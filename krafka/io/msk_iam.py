"""Amazon MSK IAM logins: SASL `AWS_MSK_IAM` with botocore's credentials, and OAUTHBEARER
tokens from Amazon's `aws-msk-iam-sasl-signer-python`.

    Producer(bootstrap_servers=..., ssl_context=ssl.create_default_context(),
             sasl_mechanism="AWS_MSK_IAM")                        # default credential chain
    Producer(..., sasl=MskIamLogin(profile="prod", role_arn="arn:aws:iam::1:role/writer"))
    Producer(..., sasl_mechanism="OAUTHBEARER",
             sasl_oauth_token_provider=MskIamTokenProvider("us-east-1"))

`MskIamLogin` signs each (re-)authentication for the broker's own host name, as Amazon's Java
`IAMLoginModule` does. Credentials come from botocore's chain (environment, shared files and
profiles, SSO, container and instance metadata), from a named profile, or from a role assumed
with STS; botocore refreshes temporary ones. As with the OAuth token endpoint, a refresh runs
synchronously when a connection authenticates. The region is `region`, else read from the
broker's host name (`b-1.x.kafka.us-east-1.amazonaws.com`), else the profile's.
Both need `pip install 'krafka[aws]'`.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, Final

from krafka import __version__
from krafka.errors import AuthenticationError, ConfigError
from krafka.sansio.sasl.mechanism import SaslMechanism
from krafka.sansio.sasl.msk_iam import (
    INSTALL_HINT,
    AwsCredentials,
    MskIamMechanism,
    signed_payload,
)
from krafka.sansio.sasl.oauthbearer import OAuthBearerToken

USER_AGENT: Final = f"krafka/{__version__}"
DEFAULT_ROLE_SESSION_NAME: Final = "krafka-msk-iam"
_REGION_IN_HOST: Final = re.compile(r"(?:^|\.)([a-z]{2}(?:-[a-z]+)+-\d+)(?:\.|$)")


def region_of(host: str) -> str | None:
    """The AWS region an MSK broker's host name names (`...kafka.eu-west-1.amazonaws.com`)."""
    found = _REGION_IN_HOST.search(host.lower())
    return found.group(1) if found else None


def _botocore_session(profile: str | None) -> Any:
    try:
        import botocore.session
    except ImportError:
        raise ConfigError(INSTALL_HINT) from None
    return botocore.session.Session(profile=profile)


class MskIamLogin:
    """The `sasl=` factory for AWS_MSK_IAM (Java's `IAMLoginModule`: `awsProfileName`,
    `awsRoleArn`, `awsRoleSessionName`, `awsStsRegion`). `credentials` overrides the chain:
    an `AwsCredentials`, botocore credentials, or a botocore `CredentialProvider`."""

    def __init__(
        self,
        *,
        region: str | None = None,
        profile: str | None = None,
        role_arn: str | None = None,
        role_session_name: str = DEFAULT_ROLE_SESSION_NAME,
        sts_region: str | None = None,
        credentials: Any = None,
        user_agent: str = USER_AGENT,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    ) -> None:
        self.region = region
        self.profile = profile
        self.role_arn = role_arn
        self.role_session_name = role_session_name
        self.sts_region = sts_region
        self.user_agent = user_agent
        self._given = credentials
        self._clock = clock
        self._lock = threading.Lock()
        self._session: Any = None
        self._source: Any = None

    def __repr__(self) -> str:
        return f"MskIamLogin(region={self.region!r}, profile={self.profile!r})"

    def __call__(self) -> SaslMechanism:
        raise AuthenticationError("AWS_MSK_IAM signs for a broker host: use for_server(host)")

    def for_server(self, host: str) -> Callable[[], SaslMechanism]:
        return functools.partial(MskIamMechanism, functools.partial(self.payload, host))

    def payload(self, host: str) -> bytes:
        """The signed client message for `host`, now."""
        return signed_payload(
            host,
            self._region(host),
            self.credentials(),
            signed_at=self._clock(),
            user_agent=self.user_agent,
        )

    def credentials(self) -> AwsCredentials:
        """The current credentials (refreshed by botocore when they are about to expire)."""
        with self._lock:
            if self._source is None:
                self._source = self._resolve()
            source = self._source
        if isinstance(source, AwsCredentials):
            return source
        frozen = source.get_frozen_credentials()
        if not frozen.access_key or not frozen.secret_key:
            raise AuthenticationError("AWS_MSK_IAM: the AWS credentials are empty")
        return AwsCredentials(frozen.access_key, frozen.secret_key, frozen.token)

    def _resolve(self) -> Any:
        given = self._given
        if isinstance(given, AwsCredentials) or hasattr(given, "get_frozen_credentials"):
            return given
        if given is not None and hasattr(given, "load"):
            loaded = given.load()
            if loaded is None:
                raise AuthenticationError(f"AWS_MSK_IAM: {given!r} found no credentials")
            return loaded
        if given is not None:
            raise TypeError("credentials: AwsCredentials, botocore credentials or a provider")
        base = self._botocore().get_credentials()
        if base is None:
            raise AuthenticationError(
                "AWS_MSK_IAM: no AWS credentials found (environment, ~/.aws, SSO, container "
                "or instance metadata)"
            )
        if self.role_arn is None:
            return base
        return self._assumed(base)

    def _assumed(self, base: Any) -> Any:
        from botocore.credentials import (
            AssumeRoleCredentialFetcher,
            DeferredRefreshableCredentials,
        )

        session = self._botocore()
        create = functools.partial(session.create_client, region_name=self.sts_region)
        fetcher = AssumeRoleCredentialFetcher(
            create, base, self.role_arn, extra_args={"RoleSessionName": self.role_session_name}
        )
        return DeferredRefreshableCredentials(fetcher.fetch_credentials, "assume-role")

    def _botocore(self) -> Any:
        if self._session is None:
            self._session = _botocore_session(self.profile)
        return self._session

    def _region(self, host: str) -> str:
        region = self.region or region_of(host)
        if region is None:
            region = self._botocore().get_config_variable("region")
        if not region:
            raise ConfigError(
                f"AWS_MSK_IAM: no AWS region for {host}: pass sasl_aws_region (or region=)"
            )
        return str(region)


class MskIamTokenProvider:
    """OAUTHBEARER tokens for MSK from Amazon's `aws-msk-iam-sasl-signer-python` (a signed URL,
    valid 15 minutes): the default chain, a `profile`, a `role_arn`, or a botocore
    `credentials_provider`. A new token per (re-)authentication."""

    def __init__(
        self,
        region: str,
        *,
        profile: str | None = None,
        role_arn: str | None = None,
        role_session_name: str = DEFAULT_ROLE_SESSION_NAME,
        credentials_provider: Any = None,
    ) -> None:
        self.region = region
        self.profile = profile
        self.role_arn = role_arn
        self.role_session_name = role_session_name
        self.credentials_provider = credentials_provider

    def __repr__(self) -> str:
        return f"MskIamTokenProvider({self.region!r})"

    def __call__(self) -> OAuthBearerToken:
        try:
            from aws_msk_iam_sasl_signer import MSKAuthTokenProvider as signer
        except ImportError:
            raise ConfigError(
                "MSK OAUTHBEARER tokens need aws-msk-iam-sasl-signer-python: "
                "pip install 'krafka[aws]'"
            ) from None
        if self.credentials_provider is not None:
            token, expiry_ms = signer.generate_auth_token_from_credentials_provider(
                self.region, self.credentials_provider
            )
        elif self.role_arn is not None:
            token, expiry_ms = signer.generate_auth_token_from_role_arn(
                self.region, self.role_arn, self.role_session_name
            )
        elif self.profile is not None:
            token, expiry_ms = signer.generate_auth_token_from_profile(self.region, self.profile)
        else:
            token, expiry_ms = signer.generate_auth_token(self.region)
        return OAuthBearerToken(token, int(expiry_ms))


def msk_iam_factory(region: str | None = None, profile: str | None = None) -> MskIamLogin:
    """What `sasl_mechanism="AWS_MSK_IAM"` logs in with."""
    return MskIamLogin(region=region, profile=profile)


__all__ = ["MskIamLogin", "MskIamTokenProvider", "msk_iam_factory", "region_of"]
