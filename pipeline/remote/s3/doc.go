// Package s3 is a remote in an S3 bucket (s3://bucket/prefix), through
// the AWS SDK for Go v2: any S3-compatible service (AWS, MinIO, Ceph,
// Cloudflare R2, moto), with the endpoint, region and credentials taken
// the way the AWS tools take them (AWS_PROFILE, AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, ~/.aws/config and credentials, AWS_REGION,
// AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_S3). A custom endpoint is
// addressed path-style (http://host/bucket/key), as S3-compatible services
// expect; without a configured region, us-east-1.
//
// Create is a conditional write (If-None-Match: *) and Swap one on the
// ETag read (If-Match), so that concurrent writers never replace each
// other's objects; a service without conditional writes would let the
// last writer win, which Create narrows by asking first (HEAD).
//
// The SDK was chosen over minio-go because it is the reference
// implementation of exactly that configuration chain (profiles, SSO,
// instance roles, endpoint variables), which a lab's researchers already
// use with the AWS CLI, and it supports S3's conditional writes.
package s3
