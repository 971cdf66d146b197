// Prints the AWS_MSK_IAM client message Amazon's aws-msk-iam-auth sends to a broker:
//   MskIamPayload HOST ACCESS_KEY SECRET_KEY USER_AGENT [SESSION_TOKEN]
// (the region comes from the host, the time from the clock, as in the library's SASL client).
// In the library's package: AuthenticationRequestParams is package-private.
package software.amazon.msk.auth.iam.internals;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;

public final class MskIamPayload {
    public static void main(String[] args) throws Exception {
        AwsCredentials credentials = args.length > 4
            ? AwsSessionCredentials.create(args[1], args[2], args[4])
            : AwsBasicCredentials.create(args[1], args[2]);
        AuthenticationRequestParams params =
            AuthenticationRequestParams.create(args[0], credentials, args[3]);
        System.out.write(new AWS4SignedPayloadGenerator().signedPayload(params));
        System.out.flush();
    }
}
