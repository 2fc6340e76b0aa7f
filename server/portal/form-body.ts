import express from 'express';

/** A portal form's body: urlencoded fields, at most 16 kB (a form holds a few short fields). */
export const formBody = express.urlencoded({ extended: false, limit: '16kb' });
