/**
 * Where burn-in artifacts (test logs, result files) go: the workflow agent's object storage, as
 * the rollout guide provisions it (a bucket and the secret keys AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, BUCKET_NAME, S3_ENDPOINT). The credentials stay in this process: the
 * workflows only ever see the object's URL.
 */
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";

export interface ArtifactStore {
  /** Stores `body` under `key`; returns the object's URL (path-style, at the endpoint). */
  put(key: string, body: Uint8Array | string, contentType: string): Promise<string>;
}

export interface S3Settings {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export function s3ArtifactStore(s: S3Settings): ArtifactStore {
  const client = new S3Client({
    endpoint: s.endpoint,
    region: s.region,
    // Path-style (endpoint/bucket/key): the S3-compatible servers sites run have no per-bucket DNS.
    forcePathStyle: true,
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    maxAttempts: 1, // the activity's own retry policy retries a failed upload
  });
  const base = s.endpoint.replace(/\/+$/, "");
  return {
    async put(key, body, contentType) {
      await client.send(new PutObjectCommand({ Bucket: s.bucket, Key: key, Body: body, ContentType: contentType }));
      return `${base}/${s.bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;
    },
  };
}
