// Package secret encrypts provider header values at rest with AES-256-GCM.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrWrongKey means a ciphertext could not be opened: it was sealed with another key or was altered.
var ErrWrongKey = errors.New("secret: cannot decrypt: wrong TRIBUNAL_MASTER_KEY or corrupted value")

const prefix = "v1:"

// Box seals and opens secret values with one master key, and authenticates
// values with another key derived from it (MAC).
type Box struct {
	aead   cipher.AEAD
	macKey [sha256.Size]byte
}

// NewBox derives a 256-bit AES key from the master key text (SHA-256), so any
// passphrase works and a generated base64 key works the same way.
func NewBox(masterKey string) (*Box, error) {
	if strings.TrimSpace(masterKey) == "" {
		return nil, errors.New("secret: empty master key")
	}
	sum := sha256.Sum256([]byte(masterKey))
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return nil, fmt.Errorf("secret: new cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: new gcm: %w", err)
	}
	return &Box{aead: aead, macKey: sha256.Sum256([]byte("tribunal-mac\x00" + masterKey))}, nil
}

// MAC is HMAC-SHA256 of msg under a key derived from the master key, apart
// from the sealing key: every process sharing the master key computes the
// same value, and nobody without it can.
func (b *Box) MAC(msg string) []byte {
	m := hmac.New(sha256.New, b.macKey[:])
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// Seal encrypts plaintext into a printable value ("v1:" + base64(nonce|ciphertext)).
func (b *Box) Seal(plaintext string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secret: nonce: %w", err)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plaintext), nil)
	return prefix + base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts a value made by Seal. It never returns garbage: a wrong key gives ErrWrongKey.
func (b *Box) Open(sealed string) (string, error) {
	raw, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return "", ErrWrongKey
	}
	data, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(data) < b.aead.NonceSize() {
		return "", ErrWrongKey
	}
	nonce, ct := data[:b.aead.NonceSize()], data[b.aead.NonceSize():]
	pt, err := b.aead.Open(nil, nonce, ct, nil)
	if err != nil {
		return "", ErrWrongKey
	}
	return string(pt), nil
}

// Mask shows only the last 4 characters of a secret (fewer for short values).
func Mask(value string) string {
	r := []rune(value)
	keep := 4
	if len(r) <= 8 {
		keep = len(r) / 4
	}
	return strings.Repeat("•", 6) + string(r[len(r)-keep:])
}

// LoadOrCreateKeyFile reads the master key from path, creating it (mode 0600)
// with 32 random bytes when it does not exist. created reports a new key.
func LoadOrCreateKeyFile(path string) (key string, created bool, err error) {
	data, err := os.ReadFile(path)
	if err == nil {
		key = strings.TrimSpace(string(data))
		if key == "" {
			return "", false, fmt.Errorf("secret: key file %s is empty", path)
		}
		return key, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", false, fmt.Errorf("secret: read key file: %w", err)
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", false, fmt.Errorf("secret: generate key: %w", err)
	}
	key = base64.StdEncoding.EncodeToString(buf)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("secret: create key dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("secret: create key file: %w", err)
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("secret: write key file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", false, fmt.Errorf("secret: close key file: %w", err)
	}
	return key, true, nil
}
