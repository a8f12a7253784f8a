"""What a session hears: input audio, turn detection, transcription (partial, eager and final), direct audio."""
