package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"zorepro/pipeline/remote"
)

// MaxLoad bounds what Load reads (an index).
const MaxLoad = 256 << 20

// Bucket is a remote under a prefix of an S3 bucket.
type Bucket struct {
	client *s3.Client
	bucket string
	prefix string // "" or ending in "/"
}

var _ remote.Backend = (*Bucket)(nil)

// Open returns the remote at s3://bucket/prefix, configured from the
// environment and the AWS configuration files.
func Open(ctx context.Context, bucket, prefix string) (*Bucket, error) {
	if bucket == "" {
		return nil, fmt.Errorf("%w: s3://%s has no bucket", remote.ErrBadRemote, prefix)
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("remote s3://%s: AWS configuration: %w", bucket, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	custom := os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != "" || cfg.BaseEndpoint != nil
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = custom
		// Checksums only where an operation requires them: S3-compatible
		// services differ in the trailing checksums they take, and every
		// object is checked against its SHA-256 by the reader anyway.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &Bucket{client: client, bucket: bucket, prefix: prefix}, nil
}

func (b *Bucket) String() string { return "s3://" + b.bucket + "/" + strings.TrimSuffix(b.prefix, "/") }

func (b *Bucket) key(k string) *string { return aws.String(b.prefix + k) }

// status is the HTTP status of an S3 error (0 if it has none).
func status(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// mapErr turns "not found" into remote.ErrNotFound and names the object.
func (b *Bucket) mapErr(op, key string, err error) error {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var ae smithy.APIError
	switch {
	case errors.As(err, &nsk) || errors.As(err, &nf) || status(err) == 404 && !(errors.As(err, &ae) && ae.ErrorCode() == "NoSuchBucket"):
		return fmt.Errorf("%w: %s/%s", remote.ErrNotFound, b, key)
	}
	return fmt.Errorf("remote %s: %s %s: %w", b, op, key, err)
}

func (b *Bucket) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: b.key(key)})
	if err != nil {
		return nil, b.mapErr("get", key, err)
	}
	return out.Body, nil
}

func (b *Bucket) Head(ctx context.Context, key string) (int64, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.bucket, Key: b.key(key)})
	if err != nil {
		return 0, b.mapErr("head", key, err)
	}
	return aws.ToInt64(out.ContentLength), nil
}

func (b *Bucket) Create(ctx context.Context, key string, r io.ReadSeeker, size int64) error {
	if _, err := b.Head(ctx, key); err == nil {
		return fmt.Errorf("%w: %s/%s", remote.ErrExists, b, key)
	} else if !errors.Is(err, remote.ErrNotFound) {
		return err
	}
	_, err := b.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &b.bucket, Key: b.key(key), Body: r, ContentLength: aws.Int64(size), IfNoneMatch: aws.String("*")})
	switch {
	case err == nil:
		return nil
	case status(err) == 412:
		return fmt.Errorf("%w: %s/%s", remote.ErrExists, b, key)
	}
	return fmt.Errorf("remote %s: put %s: %w", b, key, err)
}

func (b *Bucket) Load(ctx context.Context, key string) ([]byte, string, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: b.key(key)})
	if err != nil {
		return nil, "", b.mapErr("get", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, MaxLoad+1))
	if err != nil {
		return nil, "", fmt.Errorf("remote %s: get %s: %w", b, key, err)
	}
	if len(data) > MaxLoad {
		return nil, "", fmt.Errorf("remote %s: %s is larger than %d bytes", b, key, MaxLoad)
	}
	return data, aws.ToString(out.ETag), nil
}

func (b *Bucket) Swap(ctx context.Context, key string, data []byte, version string) error {
	in := &s3.PutObjectInput{Bucket: &b.bucket, Key: b.key(key), Body: strings.NewReader(string(data)), ContentLength: aws.Int64(int64(len(data)))}
	if version == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(version)
	}
	_, err := b.client.PutObject(ctx, in)
	switch {
	case err == nil:
		return nil
	case status(err) == 412 || status(err) == 409:
		return fmt.Errorf("%w: %s/%s", remote.ErrConflict, b, key)
	}
	return fmt.Errorf("remote %s: put %s: %w", b, key, err)
}

func (b *Bucket) List(ctx context.Context, prefix string, fn func(key string, size int64, modified time.Time) error) error {
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: b.key(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("remote %s: list %s: %w", b, prefix, err)
		}
		for _, o := range page.Contents {
			if err := fn(strings.TrimPrefix(aws.ToString(o.Key), b.prefix), aws.ToInt64(o.Size), aws.ToTime(o.LastModified)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *Bucket) Delete(ctx context.Context, key string) error {
	if _, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.bucket, Key: b.key(key)}); err != nil {
		return fmt.Errorf("remote %s: delete %s: %w", b, key, err)
	}
	return nil
}
